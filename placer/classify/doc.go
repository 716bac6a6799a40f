// Package classify groups primary tenants into utilisation classes from
// their history, as the clustering service of history-based-harvesting.txt
// (Section 4.1) does: an FFT of each tenant's most recent month sorts it
// into a pattern (periodic, constant, unpredictable), then k-means clusters
// the tenants of each pattern into classes, each tagged with its pattern,
// average and peak utilisation. It is pure and deterministic for a seed, so
// the placer and the simulator run the same code.
//
// Features of a tenant (the average server's series over Window, gaps filled
// by linear interpolation):
//   - Mean, Peak (95th percentile), SD (standard deviation), in percent;
//   - Strength: the share of the series' variance (AC power of the FFT) that
//     lies in the strongest periodicity with a period between MinPeriod (1 h)
//     and MaxPeriod (48 h), counting its harmonics (each +-HarmonicBins bins,
//     for leakage and weekly modulation). The strongest bin counts only if it
//     is a line: LineRatio (20) times the median power of the 40 bins around
//     it; harmonics count only if they are lines too. Bursty or drifting
//     utilisation has a smooth red spectrum whose strongest bin is a few times
//     its neighbours, a periodicity a line hundreds of times above them.
//     Periods above 48 h are not considered: a month holds too few of their
//     cycles to tell a line from red noise (measured on the synthetic
//     datacenters, where weekly-range "periods" were all bursty tenants);
//   - the amplitude and phase of the 24-hour component, so that periodic
//     tenants peaking at different hours fall into different classes.
//
// A constant tenant (below) gets no FFT: its pattern does not depend on its
// spectrum, so its Strength and Period stay 0 and its 24-hour component is
// computed as the one DFT bin it is, a thirtieth of the FFT's cost. (Other
// tenants get a 24-hour component only when their spectrum has a line; a
// constant tenant always has one, which k-means within its pattern uses.)
//
// Pattern, in this order:
//   - constant when SD < ConstantSD (default 4 percentage points): the
//     utilisation barely moves, whatever its shape, so its history predicts
//     it well;
//   - periodic when Strength >= PeriodicStrength (default 0.3): a single
//     periodicity and its harmonics explain a large share of the variation;
//   - unpredictable otherwise.
//
// Classes: within each pattern, k-means (k-means++ seeding, seeded PCG) on
// (mean, peak, daily amplitude x cos/sin of phase), all in percentage points,
// for the smallest k whose mean distance of tenants to their class centre is
// at most ClassSpread (default 5 points), up to MaxClasses per pattern: the
// data decides how many classes there are, and a class stays tight enough
// that its average stands for its members.
package classify
