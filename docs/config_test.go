package docs

import (
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/nomad/plugins/shared/hclspec"

	"github.com/harvest-platform/harvest/driver"
	"github.com/harvest-platform/harvest/driver/roomdevice"
	"github.com/harvest-platform/harvest/internal/connect"
	"github.com/harvest-platform/harvest/placer/classify"
	placerconfig "github.com/harvest-platform/harvest/placer/config"
	"github.com/harvest-platform/harvest/placer/packing"
	"github.com/harvest-platform/harvest/placer/partition"
	"github.com/harvest-platform/harvest/plugins/manager"
	"github.com/harvest-platform/harvest/storage/blobd"
	"github.com/harvest-platform/harvest/storage/nodes"
	"github.com/harvest-platform/harvest/storage/upkeep"
)

// option is one configuration option as the code declares it.
type option struct {
	path     string
	types    []string // the type names the reference may give it
	required bool
	def      any // the default the code declares (nil: none checked)
}

// sharedBlocks are documented once, in sections of their own: a component's
// table names the block and the block's section its options.
var sharedBlocks = map[reflect.Type]string{
	reflect.TypeOf(connect.Nomad{}):       "connect.nomad",
	reflect.TypeOf(connect.Consul{}):      "connect.consul",
	reflect.TypeOf(connect.ListenerTLS{}): "connect.tls",
}

// structOptions walks a gohcl struct: every field with an `hcl` tag is an
// option, and a block's fields are options under its name (unless the
// block is a shared one).
func structOptions(t reflect.Type, prefix string) []option {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var out []option
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, ok := f.Tag.Lookup("hcl")
		if !ok {
			continue
		}
		name, kind, _ := strings.Cut(tag, ",")
		if kind == "remain" || kind == "label" {
			continue
		}
		path := prefix + name
		o := option{path: path, types: docTypes(f.Type), required: kind == ""}
		if kind == "block" {
			o.required = false
			elem := f.Type
			for elem.Kind() == reflect.Pointer || elem.Kind() == reflect.Slice {
				elem = elem.Elem()
			}
			if _, shared := sharedBlocks[elem]; !shared {
				out = append(out, structOptions(elem, path+".")...)
			}
		}
		out = append(out, o)
	}
	return out
}

// docTypes are the names the reference may give a Go type.
func docTypes(t reflect.Type) []string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return []string{"string", "duration", "size"}
	case reflect.Bool:
		return []string{"bool"}
	case reflect.Int, reflect.Int64:
		return []string{"integer"}
	case reflect.Float64:
		return []string{"number"}
	case reflect.Struct:
		return []string{"block"}
	case reflect.Slice:
		elem := t.Elem()
		for elem.Kind() == reflect.Pointer {
			elem = elem.Elem()
		}
		if elem.Kind() == reflect.Struct {
			return []string{"blocks"}
		}
		return []string{"list(" + docTypes(elem)[0] + ")"}
	case reflect.Map:
		return []string{"map(" + docTypes(t.Elem())[0] + ")"}
	}
	panic(fmt.Sprintf("docs: no reference type for %s", t))
}

// specOptions are the attributes of a Nomad plugin hclspec object, with
// the defaults it declares.
func specOptions(t *testing.T, spec *hclspec.Spec) []option {
	obj := spec.GetObject()
	if obj == nil {
		t.Fatalf("the driver's spec is not an object: %v", spec)
	}
	var out []option
	for name, s := range obj.GetAttributes() {
		o := option{path: name}
		attr := s.GetAttr()
		if d := s.GetDefault(); d != nil {
			attr = d.GetPrimary().GetAttr()
			o.def = d.GetDefault().GetLiteral().GetValue()
		}
		if attr == nil || attr.GetName() != name {
			t.Fatalf("driver spec %q: not an attribute of that name: %v", name, s)
		}
		o.required = attr.GetRequired()
		switch typ := attr.GetType(); typ {
		case "string":
			o.types = []string{"string", "duration", "size"}
		default:
			o.types = []string{typ}
		}
		out = append(out, o)
	}
	return out
}

// withDefaults sets the defaults of opts from the code's default values.
func withDefaults(opts []option, defs map[string]any) []option {
	for i, o := range opts {
		if d, ok := defs[o.path]; ok {
			opts[i].def = d
		}
	}
	return opts
}

// valueDefaults are the non-zero leaves of a default configuration value,
// by option path (shared blocks left to their own section).
func valueDefaults(v reflect.Value, prefix string, out map[string]any) map[string]any {
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return out
		}
		v = v.Elem()
	}
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, ok := f.Tag.Lookup("hcl")
		if !ok {
			continue
		}
		name, kind, _ := strings.Cut(tag, ",")
		fv := v.Field(i)
		if kind == "block" {
			if _, shared := sharedBlocks[f.Type]; !shared && f.Type.Kind() != reflect.Slice {
				valueDefaults(fv, prefix+name+".", out)
			}
			continue
		}
		for fv.Kind() == reflect.Pointer && !fv.IsNil() {
			fv = fv.Elem()
		}
		if fv.Kind() == reflect.Pointer || fv.IsZero() {
			continue
		}
		switch fv.Kind() {
		case reflect.String:
			out[prefix+name] = strconv.Quote(fv.String())
		case reflect.Bool, reflect.Int, reflect.Int64, reflect.Float64:
			out[prefix+name] = fv.Interface()
		}
	}
	return out
}

func TestConfigurationReferenceMatchesTheCode(t *testing.T) {
	placerDefaults := valueDefaults(reflect.ValueOf(placerconfig.Default()), "", map[string]any{})
	cd := classify.Default()
	for k, v := range map[string]any{"classify.window": cd.Window, "classify.min_history": cd.MinHistory,
		"classify.periodic_strength": cd.PeriodicStrength, "classify.constant_sd": cd.ConstantSD,
		"classify.class_spread": cd.ClassSpread, "classify.max_classes": cd.MaxClasses, "classify.seed": cd.Seed,
		"packing.high_threshold": packing.Default().HighThreshold, "packing.min_nodes": packing.Default().MinNodes,
		"partition.initial_cutoff": partition.Default(10).InitialCutoff, "partition.min_size": partition.Default(10).MinPartition,
		"partition.window": partition.Default(10).Window, "partition.threshold": partition.Default(10).Threshold,
		"partition.grow": partition.Default(10).Grow, "partition.shrink": partition.Default(10).Shrink} {
		placerDefaults[k] = v
	}
	to, gc := nodes.DefaultTimeouts(nodes.Timeouts{}), upkeep.DefaultGC(upkeep.GCOptions{})
	blobDefaults := map[string]any{"timeouts.node": to.Node, "timeouts.consul": to.Consul, "timeouts.request": to.Request,
		"timeouts.queue": to.Queue, "timeouts.idle": to.Idle, "gc.interval": gc.Interval, "gc.grace": gc.Grace,
		"gc.finished_retention": gc.FinishedRetention, "gc.tombstone_retention": gc.TombstoneRetention,
		"gc.upload_expiry": gc.UploadExpiry}
	pluginDefaults := map[string]any{}
	for _, b := range []string{"usage_source.", "history_importer."} {
		pluginDefaults[b+"call_timeout"] = manager.DefaultCallTimeout
		pluginDefaults[b+"restart_backoff"] = manager.DefaultRestartBackoff
		pluginDefaults[b+"restart_backoff_max"] = manager.DefaultRestartBackoffMax
	}
	d := &driver.Driver{}
	cfgSpec, _ := d.ConfigSchema()
	taskSpec, _ := d.TaskConfigSchema()
	roomSpec, _ := roomdevice.New(hclog.NewNullLogger()).ConfigSchema()

	code := map[string][]option{
		"harvest-placer":      withDefaults(structOptions(reflect.TypeOf(placerconfig.Config{}), ""), placerDefaults),
		"harvest-blob":        withDefaults(structOptions(reflect.TypeOf(blobd.Config{}), ""), blobDefaults),
		"plugins":             withDefaults(structOptions(reflect.TypeOf(manager.Config{}), ""), pluginDefaults),
		"connect.nomad":       structOptions(reflect.TypeOf(connect.Nomad{}), ""),
		"connect.consul":      withDefaults(structOptions(reflect.TypeOf(connect.Consul{}), ""), map[string]any{"prefix": strconv.Quote(connect.DefaultPrefix)}),
		"connect.tls":         structOptions(reflect.TypeOf(connect.ListenerTLS{}), ""),
		"harvest-driver":      specOptions(t, cfgSpec),
		"harvest-driver-task": specOptions(t, taskSpec),
		"harvest-room":        specOptions(t, roomSpec),
	}
	docs := sections(t, "configuration.md", "options")
	for name := range docs {
		if _, ok := code[name]; !ok {
			t.Errorf("configuration.md has a section %q the test does not know", name)
		}
	}
	for name, opts := range code {
		rows, ok := docs[name]
		if !ok {
			t.Errorf("configuration.md has no <!-- options: %s --> section", name)
			continue
		}
		checkOptions(t, name, opts, rows)
	}
}

func checkOptions(t *testing.T, section string, opts []option, rows []row) {
	t.Helper()
	byName := map[string]row{}
	for _, r := range rows {
		if _, dup := byName[r.name]; dup {
			t.Errorf("configuration.md:%d: %s: option %q listed twice", r.line, section, r.name)
		}
		byName[r.name] = r
	}
	inCode := map[string]bool{}
	sort.Slice(opts, func(i, j int) bool { return opts[i].path < opts[j].path })
	for _, o := range opts {
		inCode[o.path] = true
		r, ok := byName[o.path]
		if !ok {
			t.Errorf("configuration.md, section %s: option %q (%s) is read by the code but not documented", section, o.path, o.types[0])
			continue
		}
		if len(r.cells) != 4 {
			t.Errorf("configuration.md:%d: %s: want 4 cells (option, type, default, meaning), got %d", r.line, o.path, len(r.cells))
			continue
		}
		if !contains(o.types, r.cells[1]) {
			t.Errorf("configuration.md:%d: %s: type %q, the code's is %s", r.line, o.path, r.cells[1], strings.Join(o.types, " or "))
		}
		def := r.cells[2]
		if o.required != strings.HasPrefix(def, "required") {
			t.Errorf("configuration.md:%d: %s: required is %v in the code, the default column says %q", r.line, o.path, o.required, def)
		}
		if o.def != nil && !sameDefault(o.def, def) {
			t.Errorf("configuration.md:%d: %s: default %q, the code's is %v", r.line, o.path, def, o.def)
		}
	}
	for _, r := range rows {
		if !inCode[r.name] {
			t.Errorf("configuration.md:%d: section %s documents %q, which the code does not read", r.line, section, r.name)
		}
	}
}

var (
	quotedRE = regexp.MustCompile(`"[^"]*"`)
	numberRE = regexp.MustCompile(`-?[0-9]+(\.[0-9]+)?`)
)

// sameDefault reports whether the reference's default cell states the
// code's default: a duration as any quoted duration equal to it, a number
// as any number equal to it, a string or an HCL literal as itself.
func sameDefault(code any, cell string) bool {
	switch v := code.(type) {
	case time.Duration:
		for _, q := range quotedRE.FindAllString(cell, -1) {
			if d, err := time.ParseDuration(strings.Trim(q, `"`)); err == nil && d == v {
				return true
			}
		}
		return false
	case int, int64, uint64, float64:
		want, _ := strconv.ParseFloat(fmt.Sprint(v), 64)
		for _, n := range numberRE.FindAllString(cell, -1) {
			if got, err := strconv.ParseFloat(n, 64); err == nil && got == want {
				return true
			}
		}
		return false
	case bool:
		return strings.Contains(cell, strconv.FormatBool(v))
	case string: // a quoted string, or an HCL literal from the driver's spec
		if n, err := strconv.ParseFloat(v, 64); err == nil {
			return sameDefault(n, cell)
		}
		return strings.Contains(cell, v)
	}
	return false
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}
