package ha

import "fmt"

// Class is an operator's recovery class (Hwang et al.'s nesting). Lower
// values are stronger: a query's class is the weakest (largest) class of its
// operators.
type Class uint8

// Operator classes, strongest first.
const (
	// Repeatable: replay from an earlier point with empty state re-emits only
	// tuples identical to the originals (filter, map, window join).
	Repeatable Class = iota
	// ConvergentCapable: restarted with empty state at an earlier point, the
	// output eventually becomes identical again (windowed aggregates).
	ConvergentCapable
	// Deterministic: same state and same input sequence give the same
	// output, but state depends on all history (running sums).
	Deterministic
	// Arbitrary: output depends on arrival interleaving or timing (union).
	Arbitrary
)

var classNames = [...]string{"repeatable", "convergent-capable", "deterministic", "arbitrary"}

// String returns the class name used in configs and reports.
func (c Class) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return fmt.Sprintf("class(%d)", c)
}

// Weakest returns the weaker of two classes.
func Weakest(a, b Class) Class {
	if a > b {
		return a
	}
	return b
}

// Emit receives an operator's output tuples.
type Emit func(Tuple)

// Operator is one step of a fragment's pipeline. It must be deterministic
// given its state and input sequence unless its Class is Arbitrary (and even
// then only the arrival order, which the node decides, may matter).
type Operator interface {
	// Name is the operator's config name ("filter", "tumbling", ...).
	Name() string
	// Class is the operator's recovery class.
	Class() Class
	// Process consumes one tuple (t.Stream is the input port) and emits its
	// results, in a deterministic order, through emit.
	Process(t Tuple, emit Emit)
	// Snapshot serialises the operator's complete state.
	Snapshot() ([]byte, error)
	// Restore replaces the state with a snapshot; nil or empty means empty state.
	Restore(snap []byte) error
}

// Sizer is implemented by stateful operators that can report how many state
// entries they hold (keys times open windows, buffered tuples, ...).
type Sizer interface {
	StateEntries() int
}
