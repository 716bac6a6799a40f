package main

import (
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/harvest-platform/harvest/history/csvfmt"
	"github.com/harvest-platform/harvest/internal/command"
)

// outputs are the output flags every subcommand takes: -json, -json-file,
// -csv and -plot.
type outputs struct {
	asJSON                      bool
	jsonPath, csvPath, plotPath string
}

// register adds the flags to fs; csvUsage and plotUsage say what the
// subcommand's -csv and -plot write.
func (o *outputs) register(fs *flag.FlagSet, csvUsage, plotUsage string) {
	fs.BoolVar(&o.asJSON, "json", false, "print a JSON summary")
	fs.StringVar(&o.jsonPath, "json-file", "", "also write the JSON summary to this file")
	fs.StringVar(&o.csvPath, "csv", "", csvUsage)
	fs.StringVar(&o.plotPath, "plot", "", plotUsage)
}

// emit writes what the flags ask for, in this order: the CSV (csvTo with
// -csv's path), the plot (plotTo with -plot's path) and the JSON summary to
// -json-file; then it prints the summary as JSON with -json, or else the
// table.
func (o outputs) emit(summary any, csvTo, plotTo func(path string) error, table func()) error {
	if o.csvPath != "" {
		if err := csvTo(o.csvPath); err != nil {
			return err
		}
	}
	if o.plotPath != "" {
		if err := plotTo(o.plotPath); err != nil {
			return err
		}
	}
	if o.jsonPath != "" {
		if err := writeJSON(o.jsonPath, summary); err != nil {
			return err
		}
	}
	if o.asJSON {
		return command.PrintJSON(os.Stdout, summary)
	}
	table()
	return nil
}

// writeJSON writes v as indented JSON to path.
func writeJSON(path string, v any) error {
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := command.PrintJSON(fh, v); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}

// writeCSV writes rows (the header first) to path.
func writeCSV(path string, rows [][]string) error {
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(fh)
	_ = w.WriteAll(rows) // its error is w.Error's
	if err := w.Error(); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}

// readTrace opens the trace at path, gzipped or not, and parses it; a parse
// error names the file.
func readTrace[T any](path string, parse func(io.Reader) (T, error)) (T, error) {
	var zero T
	fh, err := os.Open(path)
	if err != nil {
		return zero, err
	}
	defer fh.Close()
	r, err := csvfmt.Decompress(fh)
	if err != nil {
		return zero, err
	}
	v, err := parse(r)
	if err != nil {
		return zero, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}
