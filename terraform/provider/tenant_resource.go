package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/float64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/harvest-platform/harvest/history/declare"
)

var (
	_ resource.Resource                = (*tenantResource)(nil)
	_ resource.ResourceWithConfigure   = (*tenantResource)(nil)
	_ resource.ResourceWithImportState = (*tenantResource)(nil)
)

// tenantResource is a primary tenant's declaration in the placer:
// PUT/GET/DELETE /v1/tenants/{environment}/{function}.
type tenantResource struct{ c *clients }

func newTenantResource() resource.Resource { return &tenantResource{} }

type tenantModel struct {
	ID              types.String  `tfsdk:"id"`
	Environment     types.String  `tfsdk:"environment"`
	Function        types.String  `tfsdk:"function"`
	StorageMB       types.Int64   `tfsdk:"storage_mb"`
	ReserveCPU      types.Float64 `tfsdk:"reserve_cpu"`
	ReserveMemoryMB types.Int64   `tfsdk:"reserve_memory_mb"`
}

func (r *tenantResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_tenant"
}

func (r *tenantResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	replace := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	resp.Schema = schema.Schema{
		Description: "A primary tenant's declaration, kept by the placer in Consul KV: how much of its servers' disk " +
			"it offers to the blob tier (the blob front's capacity for the tenant's storage nodes) and, when it differs " +
			"from the policy's default, the CPU and memory reserve the harvest driver keeps for it on each of its servers " +
			"(the driver and the front re-read declarations every 10 s). " +
			"The placer also publishes the values as node metadata (`harvest_storage_mb`, `harvest_reserve_cpu`, " +
			"`harvest_reserve_memory_mb`) on every node whose `harvest_tenant` is this tenant.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{Computed: true, Description: "`environment/function`.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
			"environment": schema.StringAttribute{Required: true, PlanModifiers: replace,
				Description: "The tenant's environment (the first part of its id), e.g. `search`."},
			"function": schema.StringAttribute{Required: true, PlanModifiers: replace,
				Description: "The tenant's machine function (the second part of its id), e.g. `frontend`."},
			"storage_mb": schema.Int64Attribute{Optional: true, Validators: []validator.Int64{int64validator.AtLeast(0)},
				Description: "Harvestable storage each of the tenant's servers offers, in MiB."},
			"reserve_cpu": schema.Float64Attribute{Optional: true, Validators: []validator.Float64{float64validator.AtLeast(0)},
				Description: "CPU cores kept for the tenant on each server (overrides the policy's default)."},
			"reserve_memory_mb": schema.Int64Attribute{Optional: true, Validators: []validator.Int64{int64validator.AtLeast(0)},
				Description: "Memory kept for the tenant on each server, in MiB (overrides the policy's default)."},
		},
	}
}

func (r *tenantResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.c = configured(req.ProviderData, &resp.Diagnostics)
}

func (r *tenantResource) put(ctx context.Context, m *tenantModel) error {
	// the placer's JSON form (history/declare), unset fields left out
	body := declare.TenantValues{StorageMB: int64Ptr(m.StorageMB), ReserveCPU: float64Ptr(m.ReserveCPU), ReserveMemoryMB: int64Ptr(m.ReserveMemoryMB)}
	if err := body.Validate(); err != nil {
		return err
	}
	got, err := r.c.placer.PutTenant(ctx, m.Environment.ValueString(), m.Function.ValueString(), body)
	if err != nil {
		return err
	}
	m.fill(got)
	return nil
}

func (m *tenantModel) fill(d declare.Tenant) {
	m.ID = types.StringValue(d.Environment + "/" + d.Function)
	m.Environment, m.Function = types.StringValue(d.Environment), types.StringValue(d.Function)
	m.StorageMB, m.ReserveCPU, m.ReserveMemoryMB = types.Int64PointerValue(d.StorageMB), types.Float64PointerValue(d.ReserveCPU), types.Int64PointerValue(d.ReserveMemoryMB)
}

func (r *tenantResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var m tenantModel
	if resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...); resp.Diagnostics.HasError() {
		return
	}
	if err := r.put(ctx, &m); err != nil {
		resp.Diagnostics.AddError("declaring the tenant", err.Error())
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (r *tenantResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var m tenantModel
	if resp.Diagnostics.Append(req.State.Get(ctx, &m)...); resp.Diagnostics.HasError() {
		return
	}
	got, err := r.c.placer.Tenant(ctx, m.Environment.ValueString(), m.Function.ValueString())
	if errors.Is(err, errNotFound) {
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		resp.Diagnostics.AddError("reading the tenant", err.Error())
		return
	}
	m.fill(got)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (r *tenantResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var m tenantModel
	if resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...); resp.Diagnostics.HasError() {
		return
	}
	if err := r.put(ctx, &m); err != nil {
		resp.Diagnostics.AddError("updating the tenant", err.Error())
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (r *tenantResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var m tenantModel
	if resp.Diagnostics.Append(req.State.Get(ctx, &m)...); resp.Diagnostics.HasError() {
		return
	}
	if err := r.c.placer.DeleteTenant(ctx, m.Environment.ValueString(), m.Function.ValueString()); err != nil && !errors.Is(err, errNotFound) {
		resp.Diagnostics.AddError("deleting the tenant", err.Error())
	}
}

// ImportState takes `environment/function`.
func (r *tenantResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	env, fn, ok := strings.Cut(req.ID, "/")
	if !ok || env == "" || fn == "" || strings.Contains(fn, "/") {
		resp.Diagnostics.AddError("import id", fmt.Sprintf("%q: want environment/function", req.ID))
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("environment"), env)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("function"), fn)...)
}
