// Package plots draws the simulator's results as PNG charts (gonum/plot),
// in the shape of the paper's figures: failed reads against utilisation,
// lost blocks per policy and replication.
package plots

import (
	"fmt"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// Series is one named line: X and Y values.
type Series struct {
	Name string
	X, Y []float64
}

// Lines writes a line chart of the series to path (.png or .svg).
func Lines(path, title, xLabel, yLabel string, series []Series) error {
	p := plot.New()
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = title, xLabel, yLabel
	p.Legend.Top, p.Legend.Left = true, true // the curves rise to the right
	var args []any
	for _, s := range series {
		if len(s.X) != len(s.Y) {
			return fmt.Errorf("series %s: %d x values, %d y values", s.Name, len(s.X), len(s.Y))
		}
		pts := make(plotter.XYs, len(s.X))
		for i := range s.X {
			pts[i].X, pts[i].Y = s.X[i], s.Y[i]
		}
		args = append(args, s.Name, pts)
	}
	if err := plotutil.AddLinePoints(p, args...); err != nil {
		return err
	}
	return p.Save(7*vg.Inch, 4.5*vg.Inch, path)
}
