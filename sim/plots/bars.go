package plots

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// BarSeries is one bar per category, optionally with a range (say, the
// minimum and maximum over several runs) drawn as an interval on it.
type BarSeries struct {
	Name      string
	Values    []float64 // one per category; 0 draws no bar
	Low, High []float64 // nil, or one per category
}

// GroupedBars writes a grouped bar chart to path (.png or .svg): one group
// per category, one bar per series in each, as the paper's Figure 15 draws
// lost blocks per datacenter. With logY the Y axis is logarithmic and a
// zero value draws no bar (a missing bar, as in the paper, means none).
func GroupedBars(path, title, yLabel string, categories []string, series []BarSeries, logY bool) error {
	lo, hi := math.Inf(1), 0.0
	for _, s := range series {
		if len(s.Values) != len(categories) || s.Low != nil && len(s.Low) != len(categories) || s.High != nil && len(s.High) != len(categories) {
			return fmt.Errorf("series %s: want one value (and range) per category, %d categories", s.Name, len(categories))
		}
		for _, vs := range [][]float64{s.Values, s.Low, s.High} {
			for _, v := range vs {
				if v < 0 || math.IsNaN(v) {
					return fmt.Errorf("series %s: value %v", s.Name, v)
				}
				if v > 0 {
					lo, hi = math.Min(lo, v), math.Max(hi, v)
				}
			}
		}
	}
	p := plot.New()
	p.Title.Text, p.Y.Label.Text = title, yLabel
	p.Legend.Top = true
	g := &groups{series: series, n: len(categories)}
	switch {
	case hi == 0: // nothing to draw: an empty axis from 0 (or 1e-6 on a log axis) to 1
		g.base, g.top = 0, 1
		if logY {
			g.base = 1e-6
		}
	case logY:
		g.base, g.top = math.Pow10(int(math.Floor(math.Log10(lo)))-1), math.Pow10(int(math.Ceil(math.Log10(hi))))
	default:
		g.base, g.top = 0, hi*1.1
	}
	if logY {
		p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	}
	p.Add(g)
	for i, s := range series {
		p.Legend.Add(s.Name, swatch{plotutil.Color(i)})
	}
	p.NominalX(categories...)
	p.X.Min, p.X.Max = -0.5, float64(len(categories))-0.5
	return p.Save(9*vg.Inch, 4.5*vg.Inch, path)
}

// groups draws the bars; base is where bars start (the log axis's floor).
type groups struct {
	series    []BarSeries
	n         int
	base, top float64
}

func (g *groups) DataRange() (xmin, xmax, ymin, ymax float64) {
	return -0.5, float64(g.n) - 0.5, g.base, g.top
}

func (g *groups) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	width := 0.8 / float64(max(1, len(g.series)))
	for si, s := range g.series {
		for ci, v := range s.Values {
			left := float64(ci) - 0.4 + width*float64(si)
			x0, x1, xm := trX(left+0.05*width), trX(left+0.95*width), trX(left+width/2)
			if v > g.base {
				rect := c.ClipPolygonY([]vg.Point{{X: x0, Y: trY(g.base)}, {X: x1, Y: trY(g.base)}, {X: x1, Y: trY(v)}, {X: x0, Y: trY(v)}})
				c.FillPolygon(plotutil.Color(si), rect)
			}
			if s.Low != nil && s.High != nil && s.High[ci] > g.base && s.High[ci] > s.Low[ci] { // a range, not one run
				low := math.Max(s.Low[ci], g.base)
				line := draw.LineStyle{Color: color.Black, Width: vg.Points(1)}
				cap := (x1 - x0) / 4
				c.StrokeLines(line, []vg.Point{{X: xm, Y: trY(low)}, {X: xm, Y: trY(s.High[ci])}},
					[]vg.Point{{X: xm - cap, Y: trY(s.High[ci])}, {X: xm + cap, Y: trY(s.High[ci])}},
					[]vg.Point{{X: xm - cap, Y: trY(low)}, {X: xm + cap, Y: trY(low)}})
			}
		}
	}
}

// swatch is a legend entry: a filled square of the series' colour.
type swatch struct{ color color.Color }

func (s swatch) Thumbnail(c *draw.Canvas) {
	c.FillPolygon(s.color, []vg.Point{{X: c.Min.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Min.X, Y: c.Max.Y}})
}
