package ha

// Planted bug of the split-fragment work (node_minority.go).
const (
	// PlantMinorityAcks lets a primary that sees a minority of the
	// deployment alive, or regained a majority view less than
	// ElectionSettle ago, acknowledge its upstream (withholdsAck): the
	// upstream trims the input a successor elected on the majority side
	// asks for after the heal.
	PlantMinorityAcks Planted = 1 << 54
)

func init() {
	plantedNames[PlantMinorityAcks] = "minority-acks"
}
