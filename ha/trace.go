package ha

import "time"

// EventKind names a trace event.
type EventKind string

// Trace event kinds. Strategies may add their own kinds.
const (
	EvDeliver       EventKind = "deliver"          // the sink received an output (Tuple set)
	EvEmit          EventKind = "emit"             // Host emitted Tuple as Seq (only with trace_emits; Note: its role)
	EvCrash         EventKind = "crash"            // a host crashed (fault injector)
	EvPause         EventKind = "pause"            // a host was paused
	EvResume        EventKind = "resume"           // a paused host resumed
	EvPartition     EventKind = "partition"        // a partition started (Note: groups)
	EvHeal          EventKind = "heal"             // a partition ended
	EvDetect        EventKind = "detect"           // Host declared Peer dead
	EvAlive         EventKind = "alive"            // Host saw Peer alive again
	EvTakeover      EventKind = "takeover"         // Host became primary of Frag at Epoch (Peer: old primary)
	EvRoute         EventKind = "route"            // Host learned a new route
	EvFenced        EventKind = "fenced"           // Host dropped Seq messages from stale Peer, or was fenced itself
	EvCheckpointBeg EventKind = "checkpoint_start" // Seq: checkpoint id, N: bytes
	EvCheckpointEnd EventKind = "checkpoint_end"   // the backup holds checkpoint Seq
	EvRestore       EventKind = "restore"          // Host restored checkpoint Seq
	EvReplayStart   EventKind = "replay_start"     // Host replays N tuples to Peer from Seq
	EvReplayEnd     EventKind = "replay_end"       // replay to Peer done
	EvCaughtUp      EventKind = "caught_up"        // a new primary processed everything replayed to it
	EvTrim          EventKind = "trim"             // Host trimmed its output queue up to Seq (N left)
	EvGap           EventKind = "input_gap"        // Host saw N missing input seqs from Peer
	EvStats         EventKind = "stats"            // end-of-run counters of Host (Stats set)
	EvNote          EventKind = "note"             // free-form strategy note
)

// Event is one trace record. Fields not relevant to a kind are zero.
type Event struct {
	T     time.Duration `json:"t"`
	Kind  EventKind     `json:"kind"`
	Host  string        `json:"host,omitempty"`
	Peer  string        `json:"peer,omitempty"`
	Frag  int           `json:"frag,omitempty"`
	Epoch uint64        `json:"epoch,omitempty"`
	Seq   uint64        `json:"seq,omitempty"`
	N     int64         `json:"n,omitempty"`
	Note  string        `json:"note,omitempty"`
	Tuple *Tuple        `json:"tuple,omitempty"`
	Stats *NodeStats    `json:"stats,omitempty"`
}

// NodeStats are a node's cumulative counters, traced at the end of a run.
type NodeStats struct {
	Role            string `json:"role"`
	Messages        int64  `json:"messages"`         // messages sent
	Bytes           int64  `json:"bytes"`            // bytes sent (wire size)
	DataBytes       int64  `json:"data_bytes"`       // bytes of data messages sent
	Tuples          int64  `json:"tuples"`           // input tuples processed
	Work            int64  `json:"work"`             // operator invocations charged
	WorkBytes       int64  `json:"work_bytes"`       // bytes (de)serialised charged
	CPU             int64  `json:"cpu_ns"`           // busy time (simulated or measured), ns
	PeakQueue       int64  `json:"peak_queue"`       // peak retained output tuples
	PeakQueueBytes  int64  `json:"peak_queue_bytes"` // peak retained output bytes
	CheckpointBytes int64  `json:"checkpoint_bytes"` // checkpoint bytes sent
	Duplicates      int64  `json:"dup_dropped"`      // input duplicates dropped by seq
	Fenced          int64  `json:"fenced_dropped"`   // messages dropped as stale
	InputGaps       int64  `json:"input_gaps"`       // input seqs never received
}
