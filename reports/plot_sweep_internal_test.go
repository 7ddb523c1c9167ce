package reports

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"gonum.org/v1/plot/plotter"
)

func TestSortByXKeepsErrorBarsWithTheirPoints(t *testing.T) {
	s := series{
		XY:  plotter.XYs{{X: 800, Y: 5}, {X: 100, Y: 1}, {X: 400, Y: 3}},
		Err: []float64{0.5, 0.1, 0.3},
	}
	sortByX(&s)
	assert.Equal(t, plotter.XYs{{X: 100, Y: 1}, {X: 400, Y: 3}, {X: 800, Y: 5}}, s.XY)
	assert.Equal(t, []float64{0.1, 0.3, 0.5}, s.Err, "each interval stays on its own point")
}
