package declare

import (
	"strings"
	"testing"

	"github.com/harvest-platform/harvest/history"
)

func TestTenantValuesParseAndCheck(t *testing.T) {
	v, err := ParseTenantValues([]byte(`{"reserve_cpu":1.5,"reserve_memory_mb":512}`))
	if err != nil || *v.ReserveCPU != 1.5 || *v.ReserveMemoryMB != 512 || v.StorageMB != nil {
		t.Fatalf("parse %+v %v", v, err)
	}
	for body, want := range map[string]string{
		`{"reserve_cpu":-0}`:         "reserve_cpu -0: want a number >= 0",
		`{"reserve_memory_mb":-1}`:   "reserve_memory_mb -1",
		`{"storage_mb":-1}`:          "storage_mb -1",
		`{"environment":"a"}`:        `declaration body: json: unknown field "environment"`,
		`{} {}`:                      "found more after it",
		`[]`:                         "want a JSON object",
		`{"reserve_cpu":"1"}`:        "cannot unmarshal string",
		`{"reserve_memory_mb":1.5}`:  "cannot unmarshal number 1.5",
		`{"storage_mb":9e99999999}`:  "declaration body",
		`{"reserve_cpu":1e999999999`: "declaration body",
	} {
		if _, err := ParseTenantValues([]byte(body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", body, err, want)
		}
	}
	id := history.TenantID{Environment: "search", Function: "frontend"}
	rec := Tenant{Environment: "search", Function: "frontend", TenantValues: v}
	if err := rec.Check(id); err != nil || TenantDocument(id) != "declarations/tenants/search/frontend" {
		t.Fatalf("check %v, document %s", err, TenantDocument(id))
	}
	if err := rec.Check(history.TenantID{Environment: "ads", Function: "frontend"}); err == nil || !strings.Contains(err.Error(), `holds tenant "search/frontend"`) {
		t.Fatalf("another tenant's key: %v", err)
	}
	neg := int64(-2)
	rec.ReserveMemoryMB = &neg
	if err := rec.Check(id); err == nil {
		t.Fatal("a stored negative reserve passed the check")
	}
}

func TestPolicyParseAndValidate(t *testing.T) {
	p, err := ParsePolicy([]byte(`{"weights":{"short":{"periodic":1}},"reserve_cpu":0.5,"replicas":3,"diversity":"strict"}`))
	if err != nil || *p.ReserveCPU != 0.5 || p.ReserveMemoryMB != nil || p.Weights["short"]["periodic"] != 1 {
		t.Fatalf("parse %+v %v", p, err)
	}
	for body, want := range map[string]string{
		`{"weights":{"huge":{}}}`:              `weights: unknown job type "huge"`,
		`{"weights":{"long":{"spiky":1}}}`:     `weights.long: unknown pattern "spiky"`,
		`{"weights":{"long":{"constant":-1}}}`: "weights.long.constant -1",
		`{"max_classes":0}`:                    "max_classes must be at least 1, got 0",
		`{"constant_sd":-1}`:                   "constant_sd -1",
		`{"reserve_memory_mb":-512}`:           "reserve_memory_mb -512",
		`{"replicas":10}`:                      "replicas 10: want 1 to 9",
		`{"diversity":""}`:                     `diversity ""`,
		`{"seed":1}`:                           `policy body: json: unknown field "seed"`,
	} {
		if _, err := ParsePolicy([]byte(body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", body, err, want)
		}
	}
	if err := CheckThresholds("classify.", nil, nil, nil, new(int)); err == nil || err.Error() != "classify.max_classes must be at least 1, got 0" {
		t.Fatalf("prefix: %v", err)
	}
}

func TestTenantReserveOverPolicyPerResource(t *testing.T) {
	one, two := 1.0, 2.0
	m512, m1024 := int64(512), int64(1024)
	tenant := &TenantValues{ReserveCPU: &one}
	policy := &Policy{ReserveCPU: &two, ReserveMemoryMB: &m512}
	if cpu, src := ReserveCPU(tenant, policy); *cpu != 1 || src != FromTenant {
		t.Fatalf("cpu %v from %s, want the tenant's", *cpu, src)
	}
	if mem, src := ReserveMemoryMB(tenant, policy); *mem != 512 || src != FromPolicy {
		t.Fatalf("memory %v from %s, want the policy's", *mem, src)
	}
	tenant.ReserveMemoryMB = &m1024
	if mem, src := ReserveMemoryMB(tenant, policy); *mem != 1024 || src != FromTenant {
		t.Fatalf("memory %v from %s, want the tenant's", *mem, src)
	}
	if cpu, src := ReserveCPU(nil, nil); cpu != nil || src != "" {
		t.Fatalf("nothing declared: %v %q", cpu, src)
	}
	if mem, src := ReserveMemoryMB(&TenantValues{}, nil); mem != nil || src != "" {
		t.Fatalf("nothing declared: %v %q", mem, src)
	}
}
