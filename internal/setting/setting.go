// Package setting owns the parsing of configuration values that several
// components share, so that a setting reads and fails the same way in the
// placer's placer.hcl, the blob front's blob.hcl and the driver's plugin
// block.
package setting

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"
	"time"
)

// PositiveDuration parses an optional duration setting named name: def
// when value is empty, an error naming the setting and the value when it is
// not a duration greater than zero.
func PositiveDuration(name, value string, def time.Duration) (time.Duration, error) {
	if value == "" {
		return def, nil
	}
	d, err := time.ParseDuration(value)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s %q: want a positive duration such as %q", name, value, example(def))
	}
	return d, nil
}

// example is a value to show beside an error: the default when there is
// one.
func example(def time.Duration) string {
	if def <= 0 {
		return "30s"
	}
	return shortDuration(def)
}

// shortDuration writes d without Go's trailing zero units ("24h", not
// "24h0m0s").
func shortDuration(d time.Duration) string {
	s := d.String()
	for _, zero := range []string{"0s", "0m"} {
		if len(s) > len(zero) && s[len(s)-len(zero):] == zero && s[len(s)-len(zero)-1] >= 'a' {
			s = s[:len(s)-len(zero)]
		}
	}
	return s
}

// Tokens is a daemon's bearer tokens: those of its list setting and the
// lines of its file setting (blank lines and # comments skipped), each at
// least minLength characters with no spaces. fileSetting names the file
// setting and what a token in the errors ("acl: token", "admin token").
func Tokens(list []string, file, fileSetting, what string, minLength int) ([]string, error) {
	out := append([]string{}, list...)
	if file != "" {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", fileSetting, err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			line, _, _ := strings.Cut(sc.Text(), "#")
			if line = strings.TrimSpace(line); line != "" {
				out = append(out, line)
			}
		}
	}
	for i, t := range out {
		if len(t) < minLength || strings.ContainsAny(t, " \t\r\n") {
			return nil, fmt.Errorf("%s %d: want at least %d characters and no spaces (e.g. a UUID)", what, i+1, minLength)
		}
	}
	return out, nil
}
