package proxy

// Reading a job request exactly as Nomad will. Nomad decodes request bodies
// with encoding/json into its api structs: a struct field matches a key
// case-insensitively ("job", "JOB" and "Job" are all the job; "meta" its
// meta), a key given twice makes the second win (and, for an object, merge
// into the first), and what follows the first JSON value is ignored. Read
// as a plain tree, such a body could look unharvested to the proxy and
// harvested to Nomad. So the proxy reads the body strictly, refusing what
// it cannot read the same way Nomad does (duplicate keys, two keys of one
// struct field differing only in case, data after the object), and renames
// every key that names a struct field of Nomad's request type to the
// field's own spelling, walking the tree alongside the type. Map keys
// (Meta's "harvest" among them) are exact in Go, and are left alone.

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"sync"

	nomadapi "github.com/hashicorp/nomad/api"
)

// readTree decodes one JSON object, refusing a key that appears twice in
// one object and anything but white space after the object. Numbers stay
// json.Number, so they are written back as they came.
func readTree(body []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	v, err := readValue(dec, 0)
	var ambiguous *ambiguousError
	switch {
	case errors.As(err, &ambiguous):
		return nil, err
	case errors.Is(err, io.EOF):
		return nil, errors.New("the body is not a JSON object: unexpected EOF")
	case err != nil:
		return nil, fmt.Errorf("the body is not a JSON object: %w", err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("the body is not a JSON object")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("data after the JSON object (Nomad would ignore it; the proxy refuses it)")
	}
	return obj, nil
}

// ambiguousError is valid JSON the proxy will not read (Nomad could read it
// otherwise).
type ambiguousError struct{ msg string }

func (e *ambiguousError) Error() string { return e.msg }

// maxDepth bounds nesting (Nomad's own decoder allows 10000; a job is far
// shallower).
const maxDepth = 200

func readValue(dec *json.Decoder, depth int) (any, error) {
	if depth > maxDepth {
		return nil, &ambiguousError{fmt.Sprintf("JSON nested deeper than %d", maxDepth)}
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			obj := map[string]any{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key := kt.(string) // the decoder only yields strings as keys
				if _, dup := obj[key]; dup {
					return nil, &ambiguousError{fmt.Sprintf("key %q appears twice in one object", key)}
				}
				if obj[key], err = readValue(dec, depth+1); err != nil {
					return nil, err
				}
			}
			_, err := dec.Token() // '}'
			return obj, err
		case '[':
			arr := []any{}
			for dec.More() {
				v, err := readValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			_, err := dec.Token() // ']'
			return arr, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	default:
		return tok, nil
	}
}

// Nomad's request types for the job endpoints the proxy rewrites.
var (
	registerType = reflect.TypeFor[nomadapi.JobRegisterRequest]()
	planType     = reflect.TypeFor[nomadapi.JobPlanRequest]()
	validateType = reflect.TypeFor[nomadapi.JobValidateRequest]()
)

// canonicalize renames, in place, every key of tree that Go's decoder would
// match to a struct field of t (case-insensitively) to that field's name,
// recursively; two keys of one field are an error.
func canonicalize(tree any, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if opaque(t) {
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := tree.(map[string]any)
		if !ok {
			return nil // a type mismatch: Nomad refuses it itself
		}
		fields := fieldsOf(t)
		renamed := map[string]string{} // canonical -> the key that named it
		for _, key := range sortedKeys(obj) {
			f, ok := fields.match(key)
			if !ok {
				continue // Nomad ignores unknown keys
			}
			if other, dup := renamed[f.name]; dup {
				return fmt.Errorf("%s: keys %q and %q both name the field %s", where(path), other, key, f.name)
			}
			renamed[f.name] = key
			v := obj[key]
			if key != f.name {
				delete(obj, key)
				obj[f.name] = v
			}
			if err := canonicalize(v, f.typ, path+"."+f.name); err != nil {
				return err
			}
		}
	case reflect.Map:
		obj, ok := tree.(map[string]any)
		if !ok {
			return nil
		}
		for _, k := range sortedKeys(obj) {
			if err := canonicalize(obj[k], t.Elem(), path+"["+k+"]"); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		arr, ok := tree.([]any)
		if !ok {
			return nil
		}
		for i, v := range arr {
			if err := canonicalize(v, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

func where(path string) string {
	if path == "" {
		return "the request"
	}
	return strings.TrimPrefix(path, ".")
}

// opaque types decode themselves (time.Time) or take anything
// (interface{}, a task's Config): their keys are theirs.
func opaque(t reflect.Type) bool {
	if t.Kind() == reflect.Interface {
		return true
	}
	pt := reflect.PointerTo(t)
	return pt.Implements(reflect.TypeFor[json.Unmarshaler]()) || pt.Implements(reflect.TypeFor[encoding.TextUnmarshaler]())
}

type field struct {
	name string
	typ  reflect.Type
}

type fieldSet []field

// match finds the field key names as encoding/json does: the exact name
// first, else the first field whose name equals it under Unicode case
// folding (bytes.EqualFold, which encoding/json's folding agrees with).
func (fs fieldSet) match(key string) (field, bool) {
	for _, f := range fs {
		if f.name == key {
			return f, true
		}
	}
	for _, f := range fs {
		if strings.EqualFold(f.name, key) {
			return f, true
		}
	}
	return field{}, false
}

var fieldCache sync.Map // reflect.Type -> fieldSet

// fieldsOf lists the JSON fields of struct t as encoding/json sees them:
// exported fields by their tag name (or Go name), fields of embedded
// structs promoted unless a shallower field has the name, "-" skipped.
func fieldsOf(t reflect.Type) fieldSet {
	if fs, ok := fieldCache.Load(t); ok {
		return fs.(fieldSet)
	}
	var out fieldSet
	seen := map[string]bool{}
	level := []reflect.Type{t}
	for len(level) > 0 {
		var next []reflect.Type
		names := map[string]field{}
		for _, st := range level {
			for i := 0; i < st.NumField(); i++ {
				sf := st.Field(i)
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, _, _ := strings.Cut(tag, ",")
				ft := sf.Type
				if sf.Anonymous && name == "" {
					et := ft
					if et.Kind() == reflect.Pointer {
						et = et.Elem()
					}
					if et.Kind() == reflect.Struct {
						next = append(next, et)
						continue
					}
				}
				if !sf.IsExported() {
					continue
				}
				if name == "" {
					name = sf.Name
				}
				if _, clash := names[name]; !clash && !seen[name] {
					names[name] = field{name: name, typ: ft}
				}
			}
		}
		for _, st := range level {
			for i := 0; i < st.NumField(); i++ { // keep declaration order
				sf := st.Field(i)
				name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
				if name == "" {
					name = sf.Name
				}
				if f, ok := names[name]; ok && !seen[name] {
					seen[name] = true
					out = append(out, f)
				}
			}
		}
		level = next
	}
	fieldCache.Store(t, out)
	return out
}

func sortedKeys(obj map[string]any) []string {
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
