package provider

import (
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// configured is the provider's clients, as resources and data sources
// receive them in Configure (nil before the provider is configured).
func configured(data any, diags *diag.Diagnostics) *clients {
	if data == nil {
		return nil
	}
	c, ok := data.(*clients)
	if !ok {
		diags.AddError("provider data", fmt.Sprintf("unexpected %T: a bug in the provider", data))
	}
	return c
}

func int64Ptr(v types.Int64) *int64 {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	x := v.ValueInt64()
	return &x
}

func float64Ptr(v types.Float64) *float64 {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	x := v.ValueFloat64()
	return &x
}

func stringPtr(v types.String) *string {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	x := v.ValueString()
	return &x
}

func intPtr(v types.Int64) *int {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	x := int(v.ValueInt64())
	return &x
}

func int64Value(p *int) types.Int64 {
	if p == nil {
		return types.Int64Null()
	}
	return types.Int64Value(int64(*p))
}
