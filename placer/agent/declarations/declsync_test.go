package declarations

import (
	"maps"
	"testing"
)

func TestDeclaredMetaTenantWinsOverPolicy(t *testing.T) {
	one, half := 1.0, 0.5
	mem := int64(512)
	set, unset := declaredMeta(map[string]string{StorageMBKey: "5", ReserveCPUKey: "0.5"},
		&TenantValues{ReserveCPU: &half}, &PolicyDocument{ReserveCPU: &one, ReserveMemoryMB: &mem})
	if !maps.Equal(set, map[string]string{ReserveMemoryMBKey: "512"}) || len(unset) != 1 || unset[0] != StorageMBKey {
		t.Fatalf("set %v unset %v", set, unset)
	}
	if set, unset := declaredMeta(map[string]string{}, nil, nil); len(set) != 0 || len(unset) != 0 {
		t.Fatalf("nothing declared, nothing present: set %v unset %v", set, unset)
	}
}
