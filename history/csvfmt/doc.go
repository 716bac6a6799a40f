// Package csvfmt reads and writes tenant history as CSV: the generic long
// format, the reimage-event format, and the Azure Public Dataset V1 layout.
//
// Long format (header required; timestamp RFC 3339 or Unix seconds):
//
//	tenant,timestamp,cpu_percent
//	search/frontend,2026-11-01T00:00:00Z,37.5
//
// Samples are averaged into 2-minute slots. Reimage format:
//
//	tenant,node,timestamp
//	search/frontend,node-17,2026-11-03T04:10:00Z
//
// Azure V1 (one column per VM, header = VM ids, optionally "<id> <period
// hours>"; first column a row index; one row per 5 minutes): each VM becomes
// a tenant of its own, "azure-v1/vm-<id>" (the dataset says nothing of which
// VMs serve one service, so none are merged; a VM listed twice gets "-col<N>" on its second column),
// and the 5-minute series is
// resampled to 2-minute slots by linear interpolation between the two
// neighbouring rows (a slot next to a missing row stays a gap). Row 0 is at
// the start time given to ParseAzure. "NA" or an empty cell is a gap.
//
// Every error names the line (and column) at fault. Files may be gzipped.
package csvfmt
