package plots

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestChartsArePNGs(t *testing.T) {
	dir := t.TempDir()
	line := filepath.Join(dir, "line.png")
	if err := Lines(line, "failed reads", "utilisation %", "failed %", []Series{
		{Name: "stock R=3", X: []float64{20, 40, 60}, Y: []float64{0, 1.5, 16}},
		{Name: "grid R=3", X: []float64{20, 40, 60}, Y: []float64{0, 0, 3.5}},
	}); err != nil {
		t.Fatal(err)
	}
	bar := filepath.Join(dir, "bar.png")
	if err := Bars(bar, "lost blocks", "blocks", map[string]float64{"stock R=3": 11, "grid R=3": 0}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{line, bar} {
		data, err := os.ReadFile(p)
		if err != nil || !bytes.HasPrefix(data, []byte("\x89PNG")) || len(data) < 2000 {
			t.Fatalf("%s is not a PNG chart (%d bytes, %v)", p, len(data), err)
		}
	}
	if err := Lines(line, "", "", "", []Series{{Name: "bad", X: []float64{1}, Y: nil}}); err == nil {
		t.Fatal("mismatched series accepted")
	}
}
