// Package synth generates synthetic datacenters of primary tenants with
// known utilisation patterns and reimage histories, shaped as Section 3 of
// history-based-harvesting.txt describes them, seeded and reproducible. The
// classifier is measured against its labels, and the simulator replays it.
//
// The shape, from the paper's characterisation:
//   - periodic tenants are a small minority of tenants but run ~40% of the
//     servers (user-facing services are large); most tenants are roughly
//     constant; the rest are unpredictable (Figures 2 and 3);
//   - at least 90% of servers are reimaged at most once a month on average,
//     with a heavy tail of servers and tenants reimaged often (Figures 4-5);
//   - reimages are correlated: many servers of a tenant at once (a redeploy
//     or repurposing), and a tenant's rate persists from month to month.
package synth
