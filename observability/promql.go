package observability

import (
	"fmt"
	"sort"
	"strings"
)

// clauses are PromQL keywords followed by a parenthesised list of label
// names, not of expressions.
var clauses = map[string]bool{"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true}

// keywords are PromQL words that are not metric names where they stand:
// operators, modifiers, and the aggregations (which may be followed by a
// by/without clause before their parenthesis).
var keywords = map[string]bool{"and": true, "or": true, "unless": true, "bool": true, "offset": true,
	"inf": true, "nan": true, "atan2": true, "sum": true, "min": true, "max": true, "avg": true, "group": true,
	"stddev": true, "stdvar": true, "count": true, "count_values": true, "bottomk": true, "topk": true,
	"quantile": true, "limitk": true, "limit_ratio": true}

// MetricsIn returns the metric names a PromQL expression (or a Grafana
// variable query such as label_values(metric, label)) selects, sorted and
// without duplicates: every identifier that is not a function call, a
// keyword, a label name in a by/without/on/ignoring/group_left/group_right
// list or inside a {...} matcher, a string, a number, a range or a Grafana
// variable ($name, ${name}). It is a scanner, not a parser; it reports
// unbalanced brackets and unterminated strings.
func MetricsIn(expr string) ([]string, error) {
	s := &scanner{src: expr}
	names := map[string]bool{}
	var open []byte
	for s.pos < len(s.src) {
		c := s.src[s.pos]
		switch {
		case c == '"' || c == '\'' || c == '`':
			if err := s.skipString(); err != nil {
				return nil, err
			}
		case c == '#':
			for s.pos < len(s.src) && s.src[s.pos] != '\n' {
				s.pos++
			}
		case c == '{' || c == '[':
			// label matchers or a range/subquery: nothing in them is a metric name
			if err := s.skipGroup(c); err != nil {
				return nil, err
			}
		case c == '}' || c == ']':
			return nil, fmt.Errorf("unbalanced %q at %d in %q", c, s.pos, expr)
		case c == '(':
			open = append(open, c)
			s.pos++
		case c == ')':
			if len(open) == 0 {
				return nil, fmt.Errorf("unbalanced ')' at %d in %q", s.pos, expr)
			}
			open = open[:len(open)-1]
			s.pos++
		case c == '$':
			s.pos++
			if s.pos < len(s.src) && s.src[s.pos] == '{' {
				if err := s.skipGroup('{'); err != nil {
					return nil, err
				}
			} else {
				s.ident()
			}
		case isDigit(c) || c == '.':
			for s.pos < len(s.src) && (isIdent(s.src[s.pos]) || s.src[s.pos] == '.') {
				s.pos++
			}
		case isIdentStart(c):
			word := s.ident()
			next := s.peekNonSpace()
			switch {
			case clauses[strings.ToLower(word)] && next == '(':
				s.skipSpace()
				if err := s.skipGroup('('); err != nil {
					return nil, err
				}
			case next == '(' || keywords[strings.ToLower(word)]:
				// a function call or a keyword
			default:
				names[word] = true
			}
		default:
			s.pos++
		}
	}
	if len(open) > 0 {
		return nil, fmt.Errorf("unclosed '(' in %q", expr)
	}
	out := make([]string, 0, len(names))
	for n := range names {
		out = append(out, n)
	}
	sort.Strings(out)
	return out, nil
}

type scanner struct {
	src string
	pos int
}

func (s *scanner) ident() string {
	start := s.pos
	for s.pos < len(s.src) && isIdent(s.src[s.pos]) {
		s.pos++
	}
	return s.src[start:s.pos]
}

func (s *scanner) skipSpace() {
	for s.pos < len(s.src) && strings.IndexByte(" \t\r\n", s.src[s.pos]) >= 0 {
		s.pos++
	}
}

func (s *scanner) peekNonSpace() byte {
	save := s.pos
	s.skipSpace()
	var c byte
	if s.pos < len(s.src) {
		c = s.src[s.pos]
	}
	s.pos = save
	return c
}

// skipString skips the string literal at pos (a backquoted one has no escapes).
func (s *scanner) skipString() error {
	q, start := s.src[s.pos], s.pos
	s.pos++
	for s.pos < len(s.src) {
		c := s.src[s.pos]
		switch {
		case c == '\\' && q != '`':
			s.pos += 2
			continue
		case c == q:
			s.pos++
			return nil
		}
		s.pos++
	}
	return fmt.Errorf("unterminated string at %d in %q", start, s.src)
}

// skipGroup skips the bracketed group opening at pos, strings and nested
// groups included.
func (s *scanner) skipGroup(open byte) error {
	closing := map[byte]byte{'{': '}', '[': ']', '(': ')'}
	stack := []byte{closing[open]}
	start := s.pos
	s.pos++
	for s.pos < len(s.src) && len(stack) > 0 {
		c := s.src[s.pos]
		switch {
		case c == '"' || c == '\'' || c == '`':
			if err := s.skipString(); err != nil {
				return err
			}
			continue
		case closing[c] != 0:
			stack = append(stack, closing[c])
		case c == '}' || c == ']' || c == ')':
			if c != stack[len(stack)-1] {
				return fmt.Errorf("unbalanced %q at %d in %q", c, s.pos, s.src)
			}
			stack = stack[:len(stack)-1]
		}
		s.pos++
	}
	if len(stack) > 0 {
		return fmt.Errorf("unclosed %q at %d in %q", open, start, s.src)
	}
	return nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isIdentStart(c byte) bool {
	return c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
func isIdent(c byte) bool { return isIdentStart(c) || isDigit(c) }
