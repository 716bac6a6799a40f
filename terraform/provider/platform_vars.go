package provider

import (
	"fmt"
	"io/fs"
	"math/big"

	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/zclconf/go-cty/cty"

	"github.com/harvest-platform/harvest/jobs"
)

// jobVar ties a platform attribute to an HCL2 variable of one of the
// jobs/ files. The variables are written as the job's var-file and kept in
// Nomad's job submission, so reading them back finds what a `nomad job run`
// by hand changed (drift) and what an import needs.
type jobVar struct {
	job, name string
	kind      varKind
	field     func(*platformModel) any // *types.String, *types.Int64 or *types.List
}

type varKind int

const (
	varString varKind = iota
	varNumber
	varList
)

var platformVars = []jobVar{
	{"harvest-storage", "datacenters", varList, func(m *platformModel) any { return &m.Datacenters }},
	{"harvest-storage", "minio_path", varString, func(m *platformModel) any { return &m.MinIOPath }},
	{"harvest-storage", "data_root", varString, func(m *platformModel) any { return &m.StorageDataRoot }},
	{"harvest-storage", "capacity_mb", varNumber, func(m *platformModel) any { return &m.StorageCapacityMB }},
	{"harvest-storage", "memory_mb", varNumber, func(m *platformModel) any { return &m.StorageMemoryMB }},
	{"harvest-storage", "driver", varString, func(m *platformModel) any { return &m.StorageDriver }},
	{"harvest-blob", "datacenters", varList, func(m *platformModel) any { return &m.Datacenters }},
	{"harvest-blob", "harvest_bin_dir", varString, func(m *platformModel) any { return &m.HarvestBinDir }},
	{"harvest-blob", "consul_address", varString, func(m *platformModel) any { return &m.ConsulAddress }},
	{"harvest-blob", "consul_prefix", varString, func(m *platformModel) any { return &m.ConsulPrefix }},
	{"harvest-blob", "s3_port", varNumber, func(m *platformModel) any { return &m.BlobS3Port }},
	{"harvest-blob", "admin_port", varNumber, func(m *platformModel) any { return &m.BlobAdminPort }},
	{"harvest-blob", "replicas", varNumber, func(m *platformModel) any { return &m.Replicas }},
	{"harvest-placer", "datacenters", varList, func(m *platformModel) any { return &m.Datacenters }},
	{"harvest-placer", "harvest_bin_dir", varString, func(m *platformModel) any { return &m.HarvestBinDir }},
	{"harvest-placer", "nomad_address", varString, func(m *platformModel) any { return &m.NomadAddress }},
	{"harvest-placer", "consul_address", varString, func(m *platformModel) any { return &m.ConsulAddress }},
	{"harvest-placer", "consul_prefix", varString, func(m *platformModel) any { return &m.ConsulPrefix }},
	{"harvest-placer", "http_port", varNumber, func(m *platformModel) any { return &m.PlacerHTTPPort }},
	{"harvest-placer", "proxy_port", varNumber, func(m *platformModel) any { return &m.PlacerProxyPort }},
	{"harvest-placer", "extra_config", varString, func(m *platformModel) any { return &m.PlacerExtraConfig }},
	{"harvest-storage", "namespace", varString, func(m *platformModel) any { return &m.Namespace }},
	{"harvest-blob", "namespace", varString, func(m *platformModel) any { return &m.Namespace }},
	{"harvest-placer", "namespace", varString, func(m *platformModel) any { return &m.Namespace }},
	{"harvest-blob", "consul_ca_file", varString, func(m *platformModel) any { return &m.ConsulCAFile }},
	{"harvest-blob", "tls_cert_file", varString, func(m *platformModel) any { return &m.TLSCertFile }},
	{"harvest-blob", "tls_key_file", varString, func(m *platformModel) any { return &m.TLSKeyFile }},
	{"harvest-placer", "nomad_ca_file", varString, func(m *platformModel) any { return &m.NomadCAFile }},
	{"harvest-placer", "consul_ca_file", varString, func(m *platformModel) any { return &m.ConsulCAFile }},
	{"harvest-placer", "tls_cert_file", varString, func(m *platformModel) any { return &m.TLSCertFile }},
	{"harvest-placer", "tls_key_file", varString, func(m *platformModel) any { return &m.TLSKeyFile }},
}

// jobSource is the embedded HCL of a platform job.
func jobSource(name string) (string, error) {
	b, err := fs.ReadFile(jobs.Platform, jobs.File(name))
	return string(b), err
}

// varFile writes the job's variables from the model as an HCL var-file.
func varFile(job string, m *platformModel) []byte {
	f := hclwrite.NewEmptyFile()
	for _, v := range platformVars {
		if v.job != job {
			continue
		}
		switch p := v.field(m).(type) {
		case *types.String:
			if !p.IsNull() {
				f.Body().SetAttributeValue(v.name, cty.StringVal(p.ValueString()))
			}
		case *types.Int64:
			if !p.IsNull() {
				f.Body().SetAttributeValue(v.name, cty.NumberIntVal(p.ValueInt64()))
			}
		case *types.List:
			if !p.IsNull() {
				var vals []cty.Value
				for _, e := range p.Elements() {
					if s, ok := e.(types.String); ok {
						vals = append(vals, cty.StringVal(s.ValueString()))
					}
				}
				if len(vals) == 0 {
					f.Body().SetAttributeValue(v.name, cty.ListValEmpty(cty.String))
				} else {
					f.Body().SetAttributeValue(v.name, cty.ListVal(vals))
				}
			}
		}
	}
	return f.Bytes()
}

// readVarFile sets the model's attributes from a job's submitted
// var-file. Variables the file does not set are left as they are.
func readVarFile(job, src string, m *platformModel) error {
	file, diags := hclparse.NewParser().ParseHCL([]byte(src), job+".vars.hcl")
	if diags.HasErrors() {
		return fmt.Errorf("%s: submitted variables: %s", job, diags.Error())
	}
	attrs, diags := file.Body.JustAttributes()
	if diags.HasErrors() {
		return fmt.Errorf("%s: submitted variables: %s", job, diags.Error())
	}
	for _, v := range platformVars {
		a, ok := attrs[v.name]
		if v.job != job || !ok {
			continue
		}
		val, diags := a.Expr.Value(nil)
		if diags.HasErrors() || val.IsNull() || !val.IsKnown() {
			return fmt.Errorf("%s: variable %s: not a literal value", job, v.name)
		}
		if err := setFromCty(v, val, m); err != nil {
			return fmt.Errorf("%s: variable %s: %w", job, v.name, err)
		}
	}
	return nil
}

func setFromCty(v jobVar, val cty.Value, m *platformModel) error {
	switch p := v.field(m).(type) {
	case *types.String:
		if val.Type() != cty.String {
			return fmt.Errorf("want a string, have %s", val.Type().FriendlyName())
		}
		*p = types.StringValue(val.AsString())
	case *types.Int64:
		if val.Type() != cty.Number {
			return fmt.Errorf("want a number, have %s", val.Type().FriendlyName())
		}
		n, acc := val.AsBigFloat().Int64()
		if acc != big.Exact {
			return fmt.Errorf("want a whole number, have %s", val.AsBigFloat().String())
		}
		*p = types.Int64Value(n)
	case *types.List:
		if !val.Type().IsTupleType() && !val.Type().IsListType() {
			return fmt.Errorf("want a list, have %s", val.Type().FriendlyName())
		}
		elems := []attr.Value{}
		for it := val.ElementIterator(); it.Next(); {
			_, e := it.Element()
			if e.Type() != cty.String {
				return fmt.Errorf("want a list of strings")
			}
			elems = append(elems, types.StringValue(e.AsString()))
		}
		*p = types.ListValueMust(types.StringType, elems)
	}
	return nil
}
