package classify

import (
	"errors"
	"fmt"
	"math"
	"math/cmplx"
	"slices"
	"sync"
	"time"

	"gonum.org/v1/gonum/dsp/fourier"

	"github.com/harvest-platform/harvest/history"
)

// Pattern is a tenant's utilisation pattern.
type Pattern string

const (
	Periodic      Pattern = "periodic"
	Constant      Pattern = "constant"
	Unpredictable Pattern = "unpredictable"
)

// Patterns lists the patterns in a fixed order.
var Patterns = []Pattern{Periodic, Constant, Unpredictable}

// Features summarise one tenant's recent history.
type Features struct {
	Mean, Peak, SD float64 // percent
	Current        float64 // mean of the last CurrentWindow, percent
	Strength       float64 // share of variance in the dominant periodicity and its harmonics
	Period         time.Duration
	DailyAmp       float64 // amplitude of the 24-hour component, percentage points
	DailyPhase     float64 // its phase, radians
	Observed       float64 // share of the window's slots that held a sample
}

// Pattern applies the thresholds of cfg (see the package doc).
func (f Features) Pattern(cfg Config) Pattern {
	switch {
	case f.SD < cfg.ConstantSD:
		return Constant
	case f.Strength >= cfg.PeriodicStrength:
		return Periodic
	default:
		return Unpredictable
	}
}

// ErrTooLittleHistory says a tenant cannot be classified yet.
var ErrTooLittleHistory = errors.New("too little history")

// Extract computes a tenant's features from its series.
func Extract(s history.Series, cfg Config) (Features, error) {
	w := s.TrimLeadingGaps().Last(cfg.Window)
	span := time.Duration(len(w.Values)) * history.Slot
	if span < cfg.MinHistory {
		return Features{}, fmt.Errorf("%w: %s of history, need %s", ErrTooLittleHistory, span, cfg.MinHistory)
	}
	observed := float64(w.Observed()) / float64(len(w.Values))
	if observed < cfg.MinObserved {
		return Features{}, fmt.Errorf("%w: %.0f%% of the last %s has samples, need %.0f%%",
			ErrTooLittleHistory, 100*observed, span, 100*cfg.MinObserved)
	}
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	sc.x = fillGapsInto(sc.x[:0], w.Values)
	x := sc.x
	f := Features{Observed: observed}
	f.Mean, f.SD = meanSD(x)
	f.Peak = history.Percentile(x, cfg.PeakPercentile)
	recent := max(1, int(cfg.CurrentWindow/history.Slot))
	f.Current, _ = meanSD(x[len(x)-min(recent, len(x)):])
	if f.SD < cfg.ConstantSD {
		// constant whatever its spectrum (the pattern's first rule): only the
		// daily component, which places it among its class, is needed; one
		// bin costs a thirtieth of the FFT, and most tenants are constant
		dailyComponent(wholeDays(x), f.Mean, &f)
		return f, nil
	}
	spectrum(x, f.Mean, cfg, &f, sc)
	return f, nil
}

// scratch holds one feature extraction's working arrays (~600 KB for 30
// days), reused across tenants: a datacenter's refresh would otherwise
// allocate gigabytes that the collector then has to find.
type scratch struct {
	x, centred, power []float64
	coeff             []complex128
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// grow returns b resized to n (its contents are not kept).
func grow[T any](b []T, n int) []T {
	if cap(b) < n {
		return make([]T, n)
	}
	return b[:n]
}

// spectrum fills Strength, Period and the daily component from the FFT.
func spectrum(x []float64, mean float64, cfg Config, f *Features, sc *scratch) {
	x = wholeDays(x)
	n := len(x)
	sc.centred = grow(sc.centred, n)
	centred := sc.centred
	for i, v := range x {
		centred[i] = v - mean
	}
	sc.coeff = fftCoefficients(grow(sc.coeff, n/2+1), centred)
	coeff := sc.coeff
	sc.power = grow(sc.power, len(coeff))
	power := sc.power
	power[0] = 0
	total := 0.0
	for k := 1; k < len(coeff); k++ {
		power[k] = real(coeff[k])*real(coeff[k]) + imag(coeff[k])*imag(coeff[k])
		total += power[k]
	}
	if total == 0 {
		return
	}
	window := time.Duration(n) * history.Slot
	lo := max(1, int(math.Ceil(float64(window)/float64(cfg.MaxPeriod))))
	hi := min(len(power)-1, int(float64(window)/float64(cfg.MinPeriod)))
	best := 0
	for k := lo; k <= hi; k++ {
		if power[k] > power[best] || best == 0 {
			best = k
		}
	}
	if best == 0 {
		return
	}
	if !isLine(power, best, cfg) {
		return // the strongest bin is no sharper than its neighbours: no periodicity
	}
	counted := map[int]bool{}
	harmonic := 0.0
	for h := best; h < len(power) && h <= maxHarmonics*best; h += best {
		if h != best && !isLine(power, h, cfg) {
			continue
		}
		for j := h - cfg.HarmonicBins; j <= h+cfg.HarmonicBins; j++ {
			if j >= 1 && j < len(power) && !counted[j] {
				counted[j] = true
				harmonic += power[j]
			}
		}
	}
	f.Strength = harmonic / total
	f.Period = window / time.Duration(best)
	if k := dailyBin(n); k >= 1 && k < len(coeff) {
		f.DailyAmp = 2 * cmplx.Abs(coeff[k]) / float64(n)
		f.DailyPhase = cmplx.Phase(coeff[k])
	}
}

// wholeDays is the part of x the spectrum looks at. An FFT of a length with
// a large prime factor costs O(n*p), and a window of whole days puts the
// daily cycle on an exact bin: keep the most recent d whole days, d the
// largest 5-smooth count that fits (720 slots a day is 5-smooth itself; 30
// days stay 30, 29 become 27).
func wholeDays(x []float64) []float64 {
	if days := len(x) / history.SlotsPerDay; days >= 1 {
		return x[len(x)-smoothLength(days)*history.SlotsPerDay:]
	}
	return x
}

// dailyBin is the FFT bin of the 24-hour component in n slots (0: none).
func dailyBin(n int) int {
	return int(math.Round(float64(time.Duration(n)*history.Slot) / float64(24*time.Hour)))
}

// dailyComponent sets DailyAmp and DailyPhase as spectrum does, from the
// one DFT bin they come from (sum of (x[j]-mean) e^(-2 pi i k j / n)) on a
// cached table of its twiddle factors, without the rest of the spectrum.
func dailyComponent(x []float64, mean float64, f *Features) {
	n := len(x)
	k := dailyBin(n)
	if k < 1 || k > n/2 {
		return
	}
	t := twiddles(n, k)
	var re, im float64
	for j, v := range x {
		re += (v - mean) * t[2*j]
		im += (v - mean) * t[2*j+1]
	}
	c := complex(re, im)
	f.DailyAmp = 2 * cmplx.Abs(c) / float64(n)
	f.DailyPhase = cmplx.Phase(c)
}

// twiddles returns cos and -sin of 2 pi k j / n, interleaved, for j < n,
// computed once per (n, k): every tenant of a refresh has the same length.
func twiddles(n, k int) []float64 {
	key := [2]int{n, k}
	if t, ok := twiddleTables.Load(key); ok {
		return t.([]float64)
	}
	t := make([]float64, 2*n)
	for j := range n {
		s, c := math.Sincos(2 * math.Pi * float64((k*j)%n) / float64(n))
		t[2*j], t[2*j+1] = c, -s
	}
	twiddleTables.Store(key, t)
	return t
}

var twiddleTables sync.Map // [2]int{n, k} -> []float64

// smoothLength is the largest m <= n whose only prime factors are 2, 3, 5.
func smoothLength(n int) int {
	for m := n; m > 1; m-- {
		k := m
		for _, p := range []int{2, 3, 5} {
			for k%p == 0 {
				k /= p
			}
		}
		if k == 1 {
			return m
		}
	}
	return 1
}

// maxHarmonics bounds the harmonics counted into a periodicity.
const maxHarmonics = 10

// isLine reports whether bin k stands out of the spectrum around it: its
// power (with +-HarmonicBins) is at least LineRatio times the median power
// of the bins within lineNeighbourhood of it. A periodicity makes a sharp
// line; bursty or drifting utilisation makes a smooth, red spectrum whose
// strongest bin is only a few times its neighbours.
func isLine(power []float64, k int, cfg Config) bool {
	var around []float64
	peak := 0.0
	for j := k - lineNeighbourhood; j <= k+lineNeighbourhood; j++ {
		if j < 1 || j >= len(power) {
			continue
		}
		if j >= k-cfg.HarmonicBins && j <= k+cfg.HarmonicBins {
			peak = math.Max(peak, power[j])
			continue
		}
		around = append(around, power[j])
	}
	if len(around) == 0 {
		return false
	}
	slices.Sort(around)
	return peak >= cfg.LineRatio*around[len(around)/2]
}

const lineNeighbourhood = 20

// fillGapsInto replaces v's NaNs by linear interpolation between the
// nearest samples (the nearest one at either end), writing into dst (grown
// as needed).
func fillGapsInto(dst, v []float64) []float64 {
	out := append(dst[:0], v...)
	last := -1
	for i, x := range out {
		if math.IsNaN(x) {
			continue
		}
		if last == -1 {
			for j := 0; j < i; j++ {
				out[j] = x
			}
		} else if i-last > 1 {
			for j := last + 1; j < i; j++ {
				t := float64(j-last) / float64(i-last)
				out[j] = out[last]*(1-t) + x*t
			}
		}
		last = i
	}
	for j := last + 1; j < len(out) && last >= 0; j++ {
		out[j] = out[last]
	}
	return out
}

func meanSD(x []float64) (float64, float64) {
	var sum, sq float64
	for _, v := range x {
		sum += v
	}
	m := sum / float64(len(x))
	for _, v := range x {
		sq += (v - m) * (v - m)
	}
	return m, math.Sqrt(sq / float64(len(x)))
}

// ffts keeps one pool of FFT plans per length: a plan's twiddle factors
// cost as much as a transform, and every tenant has the same length.
var ffts sync.Map // int -> *sync.Pool of *fourier.FFT

func fftCoefficients(dst []complex128, x []float64) []complex128 {
	pool, _ := ffts.LoadOrStore(len(x), &sync.Pool{})
	p := pool.(*sync.Pool)
	plan, _ := p.Get().(*fourier.FFT)
	if plan == nil {
		plan = fourier.NewFFT(len(x))
	}
	defer p.Put(plan)
	return plan.Coefficients(dst, x)
}
