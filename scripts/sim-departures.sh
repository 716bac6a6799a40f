#!/usr/bin/env bash
# sim-departures.sh: the paper preset's three departures measured one at a
# time, then together, beside PT's lost-work bound (make sim-departures).
#
#   base       -room reserve -unlabelled proportional   (the paper preset before; production's as it is)
#   room       -room paper                              (L150-153's headroom)
#   heartbeat  -unlabelled heartbeat                    (L220: YARN's default fill)
#   oracle     -type-by-class                           (a bound on typing, never a preset value)
#   all        the three together
#   bound      PT with -lost-work none, under each unlabelled placement
#
# The room and the typing change only H, so H's runs under them are set
# against base's PT; heartbeat changes PT too, so "all" is set against
# heartbeat's PT. Same seeds everywhere.
#   SIM_OUT       output folder (default out/sim-departures)
#   SIM_SERVERS   servers, a list (default 1000,5000)
#   SIM_PROFILES  synthetic profiles (default 1,4,9)
#   SIM_SEEDS     seeds per point (default 3)
#   SIM_FACTORS   (default 0.75,1,1.25)
#   SIM_DAYS      simulated days, and days of history before them (default 14; the preset's 30 doubles the time)
#   SIM_EXTRA     more flags for every run (e.g. "-job-scale 2 -jobs-per-hour 0")
#   SIM_PRESET    paper (default) or production: base is then the preset as it is (reserve room, binpack2)
#   AZURE_DIR     run on the Azure V1 VMs (8 days of history, 19 simulated) instead of the profiles
#   SIM_CONFIGS   which of base,room,heartbeat,oracle,all,bound,bound-heartbeat to run (default: all of them);
#                 the table shows "-" where a run is missing
set -euo pipefail
cd "$(dirname "$0")/.."
out=${SIM_OUT:-out/sim-departures}
sim=${HARVEST_SIM:-bin/harvest-sim}
days=${SIM_DAYS:-14}
preset=${SIM_PRESET:-paper}
mkdir -p "$out"
common=(-preset "$preset" -seeds "${SIM_SEEDS:-3}" -factors "${SIM_FACTORS:-0.75,1,1.25}" -scalings linear,root)
if [[ -n ${AZURE_DIR:-} ]]; then
	common+=(-azure "$AZURE_DIR" -history-days 8 -days 19)
else
	common+=(-profiles "${SIM_PROFILES:-1,4,9}" -days "$days" -history-days "$days")
fi
# shellcheck disable=SC2206
extra=(${SIM_EXTRA:-})
base=(-room reserve -unlabelled proportional) # the paper preset before issue 41
if [[ $preset == production ]]; then
	base=()
fi

configs=",${SIM_CONFIGS:-base,room,heartbeat,oracle,all,bound,bound-heartbeat},"
run() { # name servers flags...
	local name=$1 servers=$2
	shift 2
	if [[ $configs != *",$name,"* ]]; then
		return
	fi
	local file="$out/$name-$servers.json"
	if [[ -s $file ]]; then
		echo "$(date +%T) $name at $servers servers: kept from $file" >&2
		return
	fi
	echo "$(date +%T) $name at $servers servers: $*" >&2
	"$sim" sched "${common[@]}" "${extra[@]}" -servers "$servers" "$@" -json-file "$file.tmp" >"$out/$name-$servers.txt"
	mv "$file.tmp" "$file"
}

IFS=, read -ra sizes <<<"${SIM_SERVERS:-1000,5000}"
for n in "${sizes[@]}"; do
	run base "$n" "${base[@]}" -policies pt,h
	run room "$n" "${base[@]}" -room paper -policies h
	run heartbeat "$n" "${base[@]}" -unlabelled heartbeat -policies pt,h
	run oracle "$n" "${base[@]}" -type-by-class -policies h
	run all "$n" -room paper -unlabelled heartbeat -type-by-class -policies h
	run bound "$n" "${base[@]}" -lost-work none -policies pt
	run bound-heartbeat "$n" "${base[@]}" -unlabelled heartbeat -lost-work none -policies pt

	# One row per operating point: H against its PT under each change, in
	# percent of PT's mean job time (positive: H faster), kills and waste,
	# long jobs Algorithm 1 fit in one class, long work on constant servers.
	files=()
	for c in base room heartbeat oracle all bound bound-heartbeat; do
		if [[ -s $out/$c-$n.json ]]; then
			files+=(--slurpfile "${c//-/_}" "$out/$c-$n.json")
		else
			files+=(--argjson "${c//-/_}" '[{"points": []}]')
		fi
	done
	jq -n -r --arg n "$n" "${files[@]}" '
		def pts(f): f[0].points | map({key: "\(.source) \(.scaling) x\(.factor) \(.policy)", value: .}) | from_entries;
		def red(pt; h): if pt == null or h == null then "-" else
			((pt.job_seconds.mean - h.job_seconds.mean) / pt.job_seconds.mean * 100 * 10 | round / 10 | tostring)
			+ (if pt.saturated_seeds + h.saturated_seeds > 0 then " (sat)" else "" end)
			+ (if h.job_seconds.max < pt.job_seconds.min then "*" elif h.job_seconds.min > pt.job_seconds.max then "!" else "" end) end;
		def k(x): if x == null then "-" else (x.containers_evicted.mean / 1000 | round | tostring) + "k" end;
		def r(x; f): if x == null then "-" else (x | f | tostring) end;
		pts($base) as $b | pts($room) as $room | pts($heartbeat) as $hb | pts($oracle) as $orc | pts($all) as $all
		| pts($bound) as $bd | pts($bound_heartbeat) as $bdh
		| ($b + $hb) as $any
		| "### \($n) servers\n",
		  "| point | H vs PT %: base | room | heartbeat | oracle | all | PT lost-work bound % (base / heartbeat) | kills PT / H, base | kills PT / H, all | wasted core-h PT / H, all | long jobs fit one class: base / room / oracle / all | long work on constant %: PT / H base / H all |",
		  "|---|---|---|---|---|---|---|---|---|---|---|---|",
		  ($any | keys_unsorted[] | select(endswith(" pt")) | rtrimstr(" pt") as $p
		   | ($b[$p + " pt"]) as $pt | ($hb[$p + " pt"]) as $hpt
		   | "| \($p) | \(red($pt; $b[$p + " h"])) | \(red($pt; $room[$p + " h"])) | \(red($hpt; $hb[$p + " h"])) | \(red($pt; $orc[$p + " h"])) | \(red($hpt; $all[$p + " h"]))"
		     + " | \(red($pt; $bd[$p + " pt"])) / \(red($hpt; $bdh[$p + " pt"]))"
		     + " | \(k($pt)) / \(k($b[$p + " h"])) | \(k($hpt)) / \(k($all[$p + " h"]))"
		     + " | \(r($hpt; .wasted_core_hours.mean | round)) / \(r($all[$p + " h"]; .wasted_core_hours.mean | round))"
		     + " | \([$b, $room, $orc, $all] | map(r(.[$p + " h"]; .long_jobs_fit_one_class.mean | round)) | join(" / "))"
		     + " | \([$pt, $b[$p + " h"], $all[$p + " h"]] | map(r(.; .long_work_on_constant_share.mean * 1000 | round / 10)) | join(" / ")) |"),
		  "",
		  "H vs PT: 100 x (PT - H) / PT of the seeds\u0027 mean job times, positive when H is faster; room and oracle against base\u0027s PT, all against heartbeat\u0027s PT. The bound: how much faster PT is with -lost-work none. `*`: every seed of H faster than every seed of PT; `!`: every seed slower; (sat): a seed saturated.\n"
	' | tee "$out/table-$n.md"
done
