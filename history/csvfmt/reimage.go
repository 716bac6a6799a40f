package csvfmt

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/harvest-platform/harvest/history"
)

// ParseReimages reads tenant,node,timestamp rows.
func ParseReimages(r io.Reader) (map[history.TenantID][]history.Reimage, error) {
	out := map[history.TenantID][]history.Reimage{}
	err := tenantNodeRows(r, "timestamp", func(_ int, id history.TenantID, node, stamp string) error {
		ts, err := ParseTime(stamp)
		if err != nil {
			return err
		}
		out[id] = append(out[id], history.Reimage{Node: node, Time: ts})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// tenantNodeRows reads a CSV of tenant,node,<third> under its header and
// calls row with each row's line, tenant, node (never empty) and third
// field; an error of row is reported with the line.
func tenantNodeRows(r io.Reader, third string, row func(line int, id history.TenantID, node, value string) error) error {
	return tenantNodeFields(r, []string{third}, func(line int, id history.TenantID, node string, rest []string) error {
		return row(line, id, node, rest[0])
	})
}

// tenantNodeFields reads a CSV of tenant,node,<more...> under its header
// and calls row with each row's line, tenant, node (never empty) and the
// other fields (reused by the next row: copy what is kept); an error of
// row is reported with the line.
func tenantNodeFields(r io.Reader, more []string, row func(line int, id history.TenantID, node string, rest []string) error) error {
	cr, err := newReader(r)
	if err != nil {
		return err
	}
	columns := append([]string{"tenant", "node"}, more...)
	if err := expectHeader(cr, columns...); err != nil {
		return err
	}
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return &LineError{line, err}
		}
		if len(rec) != len(columns) {
			return &LineError{line, fmt.Errorf("%d fields, want %d (%s)", len(rec), len(columns), strings.Join(columns, ","))}
		}
		id, err := history.ParseTenantID(rec[0])
		if err != nil {
			return &LineError{line, err}
		}
		node := strings.TrimSpace(rec[1])
		if node == "" {
			return &LineError{line, errors.New("empty node")}
		}
		if err := row(line, id, node, rec[2:]); err != nil {
			return &LineError{line, err}
		}
	}
}

// WriteReimages writes events in the reimage format, by tenant then time.
func WriteReimages(w io.Writer, events map[history.TenantID][]history.Reimage) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"tenant", "node", "timestamp"}); err != nil {
		return err
	}
	ids := make([]history.TenantID, 0, len(events))
	for id := range events {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i].String() < ids[j].String() })
	for _, id := range ids {
		for _, r := range events[id] {
			if err := cw.Write([]string{id.String(), r.Node, r.Time.UTC().Format(time.RFC3339)}); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
