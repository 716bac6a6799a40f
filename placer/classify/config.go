package classify

import "time"

// Config holds the classifier's thresholds; Default gives the documented values.
type Config struct {
	Window           time.Duration // how much recent history to use ("the most recent month")
	MinHistory       time.Duration // less than this is too little history
	MinObserved      float64       // share of slots in the window that must hold a sample
	MinPeriod        time.Duration // shortest periodicity considered
	MaxPeriod        time.Duration // longest periodicity considered
	HarmonicBins     int           // bins either side of each harmonic counted as its power
	PeriodicStrength float64       // Strength at or above which a tenant is periodic
	LineRatio        float64       // how far a periodicity's bin must stand above its neighbours
	ConstantSD       float64       // SD (percentage points) below which a tenant is constant
	PeakPercentile   float64       // what "peak" means
	CurrentWindow    time.Duration // "current" utilisation: mean of the latest samples
	ClassSpread      float64       // mean distance to class centre (points) k-means must reach
	MaxClasses       int           // per pattern
	Seed             uint64
}

// Default returns the documented configuration.
func Default() Config {
	return Config{
		Window:           30 * 24 * time.Hour,
		MinHistory:       7 * 24 * time.Hour,
		MinObserved:      0.6,
		MinPeriod:        time.Hour,
		MaxPeriod:        48 * time.Hour,
		HarmonicBins:     2,
		PeriodicStrength: 0.3,
		LineRatio:        20,
		ConstantSD:       4,
		PeakPercentile:   0.95,
		CurrentWindow:    time.Hour,
		ClassSpread:      5,
		MaxClasses:       12,
		Seed:             1,
	}
}
