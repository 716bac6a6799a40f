package plots

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestLinesIsAPNG(t *testing.T) {
	dir := t.TempDir()
	line := filepath.Join(dir, "line.png")
	if err := Lines(line, "failed reads", "utilisation %", "failed %", []Series{
		{Name: "stock R=3", X: []float64{20, 40, 60}, Y: []float64{0, 1.5, 16}},
		{Name: "grid R=3", X: []float64{20, 40, 60}, Y: []float64{0, 0, 3.5}},
	}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(line)
	if err != nil || !bytes.HasPrefix(data, []byte("\x89PNG")) || len(data) < 2000 {
		t.Fatalf("%s is not a PNG chart (%d bytes, %v)", line, len(data), err)
	}
	if err := Lines(line, "", "", "", []Series{{Name: "bad", X: []float64{1}, Y: nil}}); err == nil {
		t.Fatal("mismatched series accepted")
	}
}

func TestGroupedBarsOnALogAxis(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "fig15.png")
	cats := []string{"dc-0", "dc-1", "dc-2"}
	err := GroupedBars(path, "lost blocks", "% of blocks", cats, []BarSeries{
		{Name: "stock R=3", Values: []float64{0.2, 0.05, 0.4}, Low: []float64{0.1, 0.04, 0.3}, High: []float64{0.3, 0.06, 0.5}},
		{Name: "grid R=3", Values: []float64{0.0001, 0, 0.002}}, // a zero draws no bar on a log axis
		{Name: "grid R=4", Values: []float64{0, 0, 0}},
	}, true)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil || !bytes.HasPrefix(data, []byte("\x89PNG")) || len(data) < 2000 {
		t.Fatalf("not a PNG chart (%d bytes, %v)", len(data), err)
	}
	if err := GroupedBars(path, "", "", cats, []BarSeries{{Name: "all zero", Values: []float64{0, 0, 0}}}, true); err != nil {
		t.Errorf("an all-zero chart: %v", err)
	}
	if err := GroupedBars(path, "", "", cats, []BarSeries{{Name: "short", Values: []float64{1}}}, false); err == nil {
		t.Error("a series with too few values was accepted")
	}
	if err := GroupedBars(path, "", "", cats, []BarSeries{{Name: "negative", Values: []float64{1, -1, 1}}}, true); err == nil {
		t.Error("a negative value was accepted")
	}
}
