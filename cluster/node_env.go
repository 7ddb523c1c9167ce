package cluster

import (
	"bufio"
	"io"
	"math/rand/v2"
	"os"
	"sync/atomic"
	"time"

	"github.com/streamha/streamha/ha"
)

// clusterEnv is the real ha.Env of one node. Every method runs on the
// node loop goroutine; the loop fires the timers it arms.
type clusterEnv struct {
	r      *runner
	rng    *rand.Rand
	base   time.Time     // monotonic reading at process start
	offset time.Duration // base − start instant
	trace  *bufio.Writer
	events *ha.EventWriter // on trace
	tErr   error
	// file is the partial trace file; nEvents counts the events written
	// to it; finished is set once the end record is written (trace_end.go).
	file     *os.File
	nEvents  int64
	finished bool

	timers timerQueue
	copies sendSlabs // what Send queues (used by the node loop only)

	tuplesOut atomic.Int64
	closer    io.Closer
}

func (e *clusterEnv) Now() time.Duration { return e.offset + time.Since(e.base) }

func (e *clusterEnv) Rand() *rand.Rand { return e.rng }

func (e *clusterEnv) Work(int, int) {}

// maxSendTuples splits large data messages (a source that woke late
// emits everything due at once) well below ha.MaxTuplesPerMessage, which
// receivers enforce.
const maxSendTuples = 8192

// Send queues a copy of m, Tuples included, for the transport's writer:
// the node lends m for the call only (ha.Env). A large batch is split
// into messages of at most maxSendTuples.
func (e *clusterEnv) Send(to string, m *ha.Message) {
	m = e.copies.copy(m)
	if m.Kind != ha.KindData {
		e.r.tr.Send(to, m)
		return
	}
	e.tuplesOut.Add(int64(len(m.Tuples)))
	for len(m.Tuples) > maxSendTuples {
		c := *m
		c.Tuples = m.Tuples[:maxSendTuples:maxSendTuples]
		e.r.tr.Send(to, &c)
		rest := *m
		rest.Tuples = m.Tuples[maxSendTuples:]
		m = &rest
	}
	e.r.tr.Send(to, m)
}
func (e *clusterEnv) Trace(ev ha.Event) {
	if e.tErr != nil || e.finished {
		return
	}
	if err := e.events.Write(&ev); err != nil {
		e.tErr = err
		e.r.log.Printf("trace: %v (tracing stopped; the node will exit with an error)", err)
		return
	}
	e.nEvents++
}

// SetTimer arms a timer the node loop fires (timerQueue).
func (e *clusterEnv) SetTimer(d time.Duration, name string) {
	e.timers.arm(e.Now()+max(d, 0), name)
}

func (e *clusterEnv) stopTimers() { e.timers.stop() }
