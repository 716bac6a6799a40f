package command

import (
	"encoding/json"
	"io"
)

// PrintJSON writes v as indented JSON, the form every -json flag prints.
func PrintJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
