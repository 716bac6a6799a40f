package csvfmt

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/harvest-platform/harvest/history"
)

// AzureRow is the Azure V1 sampling interval.
const AzureRow = 5 * time.Minute

// AzureEnvironment is the environment every Azure VM's tenant is given.
const AzureEnvironment = "azure-v1"

// AzureVM is one VM column of an Azure V1 file.
type AzureVM struct {
	Tenant      history.TenantID
	PeriodHours int // from a "<id> <hours>" header (the periodic files); 0 if none
	Series      history.Series
}

// ParseAzure reads an Azure V1 file whose first row is at start.
func ParseAzure(r io.Reader, start time.Time) ([]AzureVM, error) {
	cr, err := newReader(r)
	if err != nil {
		return nil, err
	}
	header, err := cr.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &LineError{1, errors.New("empty input: want a header of VM ids")}
		}
		return nil, &LineError{1, err}
	}
	if len(header) < 2 {
		return nil, &LineError{1, errors.New("header names no VM column")}
	}
	vms := make([]AzureVM, len(header)-1)
	seen := map[string]bool{}
	for i, h := range header[1:] {
		fields := strings.Fields(h)
		if len(fields) == 0 || len(fields) > 2 {
			return nil, &LineError{1, fmt.Errorf("column %d header %q: want \"<vm id>\" or \"<vm id> <period hours>\"", i+2, h)}
		}
		id := history.TenantID{Environment: AzureEnvironment, Function: "vm-" + fields[0]}
		if err := id.Validate(); err != nil {
			return nil, &LineError{1, fmt.Errorf("column %d: %w", i+2, err)}
		}
		if seen[id.Function] { // the periodic file lists VM 83972 twice
			id.Function += fmt.Sprintf("-col%d", i+2)
		}
		seen[id.Function] = true
		vms[i].Tenant = id
		if len(fields) == 2 {
			if vms[i].PeriodHours, err = strconv.Atoi(fields[1]); err != nil || vms[i].PeriodHours <= 0 {
				return nil, &LineError{1, fmt.Errorf("column %d: period %q is not a positive number of hours", i+2, fields[1])}
			}
		}
	}
	rows := make([][]float64, len(vms))
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, &LineError{line, err}
		}
		if len(rec) != len(vms)+1 {
			return nil, &LineError{line, fmt.Errorf("%d fields, want %d (index + one per VM)", len(rec), len(vms)+1)}
		}
		for i, cell := range rec[1:] {
			v := math.NaN()
			if c := strings.TrimSpace(cell); c != "" && c != "NA" {
				if v, _, err = ParsePercent(c); err != nil {
					return nil, &LineError{line, fmt.Errorf("column %d (%s): %w", i+2, vms[i].Tenant, err)}
				}
			}
			rows[i] = append(rows[i], v)
		}
	}
	if len(rows[0]) < 2 {
		return nil, &LineError{2, errors.New("fewer than two rows of samples")}
	}
	for i := range vms {
		vms[i].Series = Resample(rows[i], start.UTC(), AzureRow)
	}
	return vms, nil
}

// Resample turns samples taken every step from start into 2-minute slots
// by linear interpolation between the neighbouring samples; a slot beside
// a missing sample is a gap. The series starts at the first slot at or
// after start.
func Resample(samples []float64, start time.Time, step time.Duration) history.Series {
	first := start.Truncate(history.Slot)
	if first.Before(start) {
		first = first.Add(history.Slot)
	}
	span := time.Duration(len(samples)-1) * step
	n := int((start.Add(span).Sub(first))/history.Slot) + 1
	out := history.Series{Start: first, Values: make([]float64, max(n, 0))}
	for k := range out.Values {
		pos := float64(first.Add(time.Duration(k)*history.Slot).Sub(start)) / float64(step)
		i := int(pos)
		frac := pos - float64(i)
		switch {
		case i >= len(samples)-1:
			out.Values[k] = samples[len(samples)-1]
		default:
			out.Values[k] = samples[i]*(1-frac) + samples[i+1]*frac
			if frac == 0 {
				out.Values[k] = samples[i]
			}
		}
	}
	return out
}
