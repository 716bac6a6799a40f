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

// Series is one named line: X and Y values, and optionally the range of
// each Y (Low, High: one per value, drawn as error bars).
type Series struct {
	Name string    `json:"name"`
	X    []float64 `json:"x"`
	Y    []float64 `json:"y"`
	Low  []float64 `json:"low,omitempty"`
	High []float64 `json:"high,omitempty"`
}

// Lines writes a line chart of the series to path (.png or .svg).
func Lines(path, title, xLabel, yLabel string, series []Series) error {
	p := plot.New()
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = title, xLabel, yLabel
	p.Legend.Top, p.Legend.Left = true, true // the curves rise to the right
	var args []any
	for k, s := range series {
		if len(s.X) != len(s.Y) {
			return fmt.Errorf("series %s: %d x values, %d y values", s.Name, len(s.X), len(s.Y))
		}
		pts := make(plotter.XYs, len(s.X))
		for i := range s.X {
			pts[i].X, pts[i].Y = s.X[i], s.Y[i]
		}
		args = append(args, s.Name, pts)
		if s.Low == nil {
			continue
		}
		if len(s.Low) != len(s.Y) || len(s.High) != len(s.Y) {
			return fmt.Errorf("series %s: ranges for %d and %d of %d values", s.Name, len(s.Low), len(s.High), len(s.Y))
		}
		bars := make(errPoints, len(s.Y))
		for i := range s.Y {
			bars[i] = errPoint{x: s.X[i], y: s.Y[i], low: s.Y[i] - s.Low[i], high: s.High[i] - s.Y[i]}
		}
		eb, err := plotter.NewYErrorBars(bars)
		if err != nil {
			return err
		}
		eb.Color = plotutil.Color(k)
		p.Add(eb)
	}
	if err := plotutil.AddLinePoints(p, args...); err != nil {
		return err
	}
	return p.Save(7*vg.Inch, 4.5*vg.Inch, path)
}

// errPoints are points with their distance to the low and high ends of
// their range, as plotter.NewYErrorBars reads them.
type errPoints []errPoint

type errPoint struct{ x, y, low, high float64 }

func (e errPoints) Len() int                    { return len(e) }
func (e errPoints) XY(i int) (float64, float64) { return e[i].x, e[i].y }
func (e errPoints) YError(i int) (float64, float64) {
	return e[i].low, e[i].high
}
