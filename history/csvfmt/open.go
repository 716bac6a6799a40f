package csvfmt

import (
	"bufio"
	"compress/gzip"
	"io"
)

// Decompress returns r, gunzipped if it starts with the gzip magic.
func Decompress(r io.Reader) (io.Reader, error) {
	br := bufio.NewReader(r)
	magic, _ := br.Peek(2)
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		return gzip.NewReader(br)
	}
	return br, nil
}
