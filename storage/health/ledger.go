package health

// Fronts share what each writes through ledgers, so that a node's room
// holds across every front serving the tier: storage/nodes/ledger.go says
// what a ledger holds and how a front counts the others' (nodes.Ledger,
// Pool.OwnLedger, Pool.CountOthers). At every health check (health.go)
// ShareLedger writes this front's ledger to <prefix>blob/fronts/<id> and
// reads the other fronts'. The maintainer deletes ledgers not written for
// nodes.LedgerKeep (fronts that are gone). A ledger that does not decode is
// skipped; failures are logged once per episode (warnEpisode).

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"

	"github.com/harvest-platform/harvest/kv"
	"github.com/harvest-platform/harvest/storage/nodes"
)

// ledgerFolder holds one ledger per front under the prefix.
const ledgerFolder = "blob/fronts/"

// ShareLedger writes this front's ledger and counts the others' (at every
// health check); the maintainer also deletes ledgers of fronts gone for
// nodes.LedgerKeep. It answers how many fronts wrote their ledger within
// nodes.LedgerFresh, this one included: the fronts serving now.
func (h *Checker) ShareLedger(ctx context.Context) int {
	now := time.Now()
	folder := h.prefix + ledgerFolder
	own, err := json.Marshal(h.nodes.OwnLedger(now))
	if err == nil {
		_, err = h.kv.Txn(ctx, []kv.Op{{Verb: kv.Set, Key: folder + h.frontID, Value: own}})
	}
	h.warnEpisode("ledger-write", err, "could not write this front's ledger; the other fronts count its writes at their next scan")
	pairs, err := h.kv.List(ctx, folder)
	h.warnEpisode("ledger-read", err, "could not read the other fronts' ledgers; their writes count at the next scan")
	if err != nil {
		return 0
	}
	var others []nodes.Ledger
	fronts := 1 // this one
	for _, p := range pairs {
		if strings.TrimPrefix(p.Key, folder) == h.frontID {
			continue
		}
		var doc nodes.Ledger
		err := json.Unmarshal(p.Value, &doc)
		if h.warnEpisode("ledger-corrupt:"+p.Key, err, "skipping another front's ledger that does not decode", "key", p.Key); err != nil {
			continue
		}
		if now.Sub(doc.Written) > nodes.LedgerKeep && h.upkeep.Maintainer() {
			_, _ = h.kv.DeleteCAS(ctx, p.Key, p.Index) // a front gone for long: its commits are counted by every scan since
			continue
		}
		others = append(others, doc)
		if now.Sub(doc.Written) <= nodes.LedgerFresh {
			fronts++
		}
	}
	h.nodes.CountOthers(others, now)
	h.metrics.Fronts.Set(float64(fronts))
	h.frontsSeen.Store(int64(fronts))
	return fronts
}

// Fronts is how many fronts served at the last health check (ShareLedger),
// this one included.
func (h *Checker) Fronts() int { return int(h.frontsSeen.Load()) }

// LedgerKey is where this front's ledger is in Consul KV.
func (h *Checker) LedgerKey() string { return h.prefix + ledgerFolder + h.frontID }

// warnEpisode logs msg (with err) when err begins an episode of failures
// of what flag names, and ends the episode when err is nil; it returns err.
func (h *Checker) warnEpisode(flag string, err error, msg string, args ...any) error {
	if err == nil {
		h.episodes.Delete(flag)
		return nil
	}
	if _, seen := h.episodes.LoadOrStore(flag, true); !seen {
		h.log.Warn(msg, append(args, "error", err)...)
	}
	return err
}

// newFrontID names this front's ledger: random, so a restarted front starts
// a ledger of its own and the old one ages out.
func newFrontID() string {
	var b [8]byte
	_, _ = crand.Read(b[:])
	return hex.EncodeToString(b[:])
}
