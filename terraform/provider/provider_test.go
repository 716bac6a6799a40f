package provider

import (
	"context"
	"sort"

	"errors"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/harvest-platform/harvest/api"
	"github.com/harvest-platform/harvest/history/declare"
	"github.com/harvest-platform/harvest/jobs"
)

// TestSchemasAreValid: the framework checks every resource's and data
// source's schema (defaults only on computed attributes, and so on) when
// Terraform asks for them; a mistake is an error diagnostic here.
func TestSchemasAreValid(t *testing.T) {
	srv, err := providerserver.NewProtocol6WithError(New("test")())()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.GetProviderSchema(context.Background(), &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range resp.Diagnostics {
		t.Errorf("%s: %s", d.Summary, d.Detail)
	}
	for _, name := range []string{"harvest_tenant", "harvest_placer_policy", "harvest_blob_bucket", "harvest_platform"} {
		if resp.ResourceSchemas[name] == nil {
			t.Errorf("no resource %s", name)
		}
	}
	for _, name := range []string{"harvest_classes", "harvest_blob_repair_state"} {
		if resp.DataSourceSchemas[name] == nil {
			t.Errorf("no data source %s", name)
		}
	}
}

// TestEveryPlatformVariableIsDeclaredByItsJob: Nomad rejects a var-file
// naming a variable the job lacks, so the table must follow jobs/.
func TestEveryPlatformVariableIsDeclaredByItsJob(t *testing.T) {
	declared := map[string]map[string]bool{}
	for _, name := range jobs.PlatformOrder {
		src, err := jobSource(name)
		if err != nil {
			t.Fatal(err)
		}
		names, err := declaredVariables(src)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		declared[name] = map[string]bool{}
		for _, n := range names {
			declared[name][n] = true
		}
	}
	for _, v := range platformVars {
		if !declared[v.job][v.name] {
			t.Errorf("%s declares no variable %q", v.job, v.name)
		}
	}
}

func sampleModel() platformModel {
	return platformModel{
		Datacenters:       types.ListValueMust(types.StringType, []attr.Value{types.StringValue("dc1"), types.StringValue("dc 2")}),
		HarvestBinDir:     types.StringValue(`/opt/harvest "bin"`),
		MinIOPath:         types.StringValue("/usr/local/bin/minio"),
		StorageDataRoot:   types.StringValue("/srv/${x}/storage"),
		StorageCapacityMB: types.Int64Value(2048),
		StorageMemoryMB:   types.Int64Value(300),
		StorageDriver:     types.StringValue("raw_exec"),
		NomadAddress:      types.StringValue("http://127.0.0.1:4646"),
		ConsulAddress:     types.StringValue("127.0.0.1:8500"),
		ConsulPrefix:      types.StringValue("harvest/"),
		PlacerHTTPPort:    types.Int64Value(4650),
		PlacerProxyPort:   types.Int64Value(4656),
		PlacerExtraConfig: types.StringValue("packing {\n  enabled = true\n}\n"),
		BlobS3Port:        types.Int64Value(9100),
		BlobAdminPort:     types.Int64Value(9101),
		Replicas:          types.Int64Value(2),
	}
}

// TestVarFileRoundTrips: what deploy submits to Nomad, read reads back
// unchanged — quotes, template-looking text and lists included — so a plan
// right after apply is empty and an import finds every setting.
func TestVarFileRoundTrips(t *testing.T) {
	want := sampleModel()
	var got platformModel
	for _, name := range jobs.PlatformOrder {
		if err := readVarFile(name, string(varFile(name, &want)), &got); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, varFile(name, &want))
		}
	}
	for _, v := range platformVars {
		w, g := valueOf(v.field(&want)), valueOf(v.field(&got))
		if !w.Equal(g) {
			t.Errorf("%s: wrote %s, read %s", v.name, w, g)
		}
	}
}

func TestReadVarFileRejectsWhatItCannotTrust(t *testing.T) {
	var m platformModel
	for src, want := range map[string]string{
		`capacity_mb = "lots"`:   "want a number",
		`capacity_mb = 1.5`:      "whole number",
		`data_root = upper("x")`: "not a literal",
		`datacenters = [1, 2]`:   "list of strings",
		`data_root = `:           "submitted variables",
	} {
		err := readVarFile("harvest-storage", src, &m)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want one saying %q", src, err, want)
		}
	}
}

// TestPlacerErrors: a 404 is errNotFound (the object is gone: Terraform
// plans to create it again); other failures carry the API's own message.
func TestPlacerErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/tenants/a/gone":
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error":"tenant a/gone is not declared"}`))
		default:
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":"reserve_cpu must not be negative"}`))
		}
	}))
	defer srv.Close()
	p := api.Client{Address: srv.URL + "/"}
	err := p.Do(context.Background(), http.MethodGet, "/v1/tenants/a/gone", nil, &declare.Tenant{})
	if !errors.Is(err, errNotFound) {
		t.Fatalf("404: %v, want errNotFound", err)
	}
	err = p.Do(context.Background(), http.MethodPut, "/v1/tenants/a/b", declare.TenantValues{}, nil)
	if err == nil || errors.Is(err, errNotFound) || !strings.Contains(err.Error(), "reserve_cpu must not be negative") {
		t.Fatalf("400: %v", err)
	}
}

func valueOf(p any) attr.Value {
	switch p := p.(type) {
	case *types.String:
		return *p
	case *types.Int64:
		return *p
	case *types.List:
		return *p
	}
	panic("unexpected field type")
}

// declaredVariables lists the variable blocks of a job file, so a var-file
// never names one the job lacks (Nomad rejects that).
func declaredVariables(src string) ([]string, error) {
	file, diags := hclsyntax.ParseConfig([]byte(src), "job.nomad.hcl", hcl.InitialPos)
	if diags.HasErrors() {
		return nil, diags
	}
	var names []string
	for _, b := range file.Body.(*hclsyntax.Body).Blocks {
		if b.Type == "variable" && len(b.Labels) == 1 {
			names = append(names, b.Labels[0])
		}
	}
	sort.Strings(names)
	return names, nil
}
