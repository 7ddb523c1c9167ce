package strategies

import (
	"time"

	"github.com/streamha/streamha/ha"
)

// TimelineFunc reads a strategy's own history out of a run's trace — its
// checkpoints, its queues — for the run report (Info.Timeline). ok is
// false when the trace holds nothing to draw (the strategy took no
// checkpoint, say). It only reads the trace.
type TimelineFunc func(tr *ha.Trace) (tl Timeline, ok bool)

// Timeline is a strategy's history of one run: panels above each other on
// one time axis, drawn by the reports in the strategy's colour beside the
// run's crash, detection and takeover marks.
type Timeline struct {
	// Title names the figure ("checkpoint history").
	Title string
	// Panels are drawn top to bottom.
	Panels []TimelinePanel
	// Notes say what the figure leaves out (more hosts than drawn).
	Notes []string
}

// TimelinePanel is one panel: a y quantity over time.
type TimelinePanel struct {
	// Title heads the panel; it may span lines (a restored checkpoint
	// named on a line of its own).
	Title string
	// YLabel is the quantity and unit of the y axis.
	YLabel string
	// Series are drawn in order, each listed in the legend.
	Series []TimelineSeries
	// Events are instants drawn as labelled vertical lines (a rollback).
	Events []TimelineEvent
}

// TimelineStyle is how a series is drawn.
type TimelineStyle int

// Series styles.
const (
	// TimelineStems draws each point as a stem from 0 with a dot on top
	// (a checkpoint's size when it was taken).
	TimelineStems TimelineStyle = iota
	// TimelineDots draws the points alone.
	TimelineDots
	// TimelineSteps draws a line that holds each value until the next
	// point (a queue's size).
	TimelineSteps
	// TimelineSpans draws each point as a bar from T to T+Span at height
	// Y (a checkpoint from its start until it completed).
	TimelineSpans
)

// TimelineSeries is one labelled set of points.
type TimelineSeries struct {
	Label  string
	Style  TimelineStyle
	Points []TimelinePoint
	// Hollow draws open glyphs (not acknowledged, not completed).
	Hollow bool
	// Highlight draws large rings in the fault colour over the points
	// (the checkpoint a takeover restored).
	Highlight bool
}

// TimelinePoint is one value at one instant.
type TimelinePoint struct {
	T time.Duration
	Y float64
	// Span is, for TimelineSpans, how long the bar lasts.
	Span time.Duration
}

// TimelineEvent is an instant with a label.
type TimelineEvent struct {
	T     time.Duration
	Label string
}
