package provider

import (
	"context"
	"errors"

	"github.com/hashicorp/terraform-plugin-framework-validators/float64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
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
	_ resource.Resource                = (*policyResource)(nil)
	_ resource.ResourceWithConfigure   = (*policyResource)(nil)
	_ resource.ResourceWithImportState = (*policyResource)(nil)
)

// policyID is the id of the one placer policy of a cluster.
const policyID = "policy"

// policyResource is the placer's policy document: PUT/GET/DELETE /v1/policy.
type policyResource struct{ c *clients }

func newPolicyResource() resource.Resource { return &policyResource{} }

type policyModel struct {
	ID               types.String  `tfsdk:"id"`
	PeriodicStrength types.Float64 `tfsdk:"periodic_strength"`
	ConstantSD       types.Float64 `tfsdk:"constant_sd"`
	ClassSpread      types.Float64 `tfsdk:"class_spread"`
	MaxClasses       types.Int64   `tfsdk:"max_classes"`
	Weights          types.Map     `tfsdk:"weights"`
	ReserveCPU       types.Float64 `tfsdk:"reserve_cpu"`
	ReserveMemoryMB  types.Int64   `tfsdk:"reserve_memory_mb"`
	Replicas         types.Int64   `tfsdk:"replicas"`
	Diversity        types.String  `tfsdk:"diversity"`
}

var weightsType = types.MapType{ElemType: types.Float64Type}

func (r *policyResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_placer_policy"
}

func (r *policyResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	nonNegative := []validator.Float64{float64validator.AtLeast(0)}
	resp.Schema = schema.Schema{
		Description: "The placer's policy (one per cluster): the classifier's thresholds, Algorithm 1's ranking " +
			"weights, the default reserve of harvested nodes and the blob tier's default replication. Unset " +
			"settings keep the placer's configuration file values. Destroying it returns the placer to them.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{Computed: true, Description: "Always `policy`.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
			"periodic_strength": schema.Float64Attribute{Optional: true, Validators: nonNegative,
				Description: "Share of a tenant's variance its strongest daily/weekly periods must hold to be periodic."},
			"constant_sd": schema.Float64Attribute{Optional: true, Validators: nonNegative,
				Description: "Largest standard deviation (CPU percent points) of a constant tenant."},
			"class_spread": schema.Float64Attribute{Optional: true, Validators: nonNegative,
				Description: "Largest spread (CPU percent points) within one k-means class."},
			"max_classes": schema.Int64Attribute{Optional: true, Validators: []validator.Int64{int64validator.Between(1, 64)},
				Description: "Most classes per pattern."},
			"weights": schema.MapAttribute{Optional: true, ElementType: weightsType,
				Description: "Ranking weights W[job type][pattern] of Algorithm 1, e.g. `{ long = { constant = 3, periodic = 2, unpredictable = 1 } }`."},
			"reserve_cpu": schema.Float64Attribute{Optional: true, Validators: nonNegative,
				Description: "CPU cores kept for the primary tenant on harvested nodes whose tenant declares none."},
			"reserve_memory_mb": schema.Int64Attribute{Optional: true, Validators: []validator.Int64{int64validator.AtLeast(0)},
				Description: "Memory (MiB) kept for the primary tenant on harvested nodes whose tenant declares none."},
			"replicas": schema.Int64Attribute{Optional: true, Validators: []validator.Int64{int64validator.Between(1, 9)},
				Description: "Default replication factor of the blob tier."},
			"diversity": schema.StringAttribute{Optional: true, Validators: []validator.String{stringvalidator.OneOf("strict", "degraded")},
				Description: "Default diversity rule of the blob tier: `strict` refuses a write it cannot place diversely, `degraded` relaxes."},
		},
	}
}

func (r *policyResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.c = configured(req.ProviderData, &resp.Diagnostics)
}

// document is the placer's JSON form (history/declare), unset fields left out.
func (m *policyModel) document(ctx context.Context) (declare.Policy, diag.Diagnostics) {
	d := declare.Policy{PeriodicStrength: float64Ptr(m.PeriodicStrength), ConstantSD: float64Ptr(m.ConstantSD),
		ClassSpread: float64Ptr(m.ClassSpread), MaxClasses: intPtr(m.MaxClasses), ReserveCPU: float64Ptr(m.ReserveCPU),
		ReserveMemoryMB: int64Ptr(m.ReserveMemoryMB), Replicas: intPtr(m.Replicas), Diversity: stringPtr(m.Diversity)}
	var diags diag.Diagnostics
	if !m.Weights.IsNull() && !m.Weights.IsUnknown() {
		diags = m.Weights.ElementsAs(ctx, &d.Weights, false)
	}
	return d, diags
}

func (m *policyModel) fill(ctx context.Context, d declare.Policy) diag.Diagnostics {
	m.ID = types.StringValue(policyID)
	m.PeriodicStrength, m.ConstantSD, m.ClassSpread = types.Float64PointerValue(d.PeriodicStrength), types.Float64PointerValue(d.ConstantSD), types.Float64PointerValue(d.ClassSpread)
	m.MaxClasses, m.ReserveCPU, m.ReserveMemoryMB = int64Value(d.MaxClasses), types.Float64PointerValue(d.ReserveCPU), types.Int64PointerValue(d.ReserveMemoryMB)
	m.Replicas, m.Diversity = int64Value(d.Replicas), types.StringPointerValue(d.Diversity)
	if d.Weights == nil {
		m.Weights = types.MapNull(weightsType)
		return nil
	}
	var diags diag.Diagnostics
	m.Weights, diags = types.MapValueFrom(ctx, weightsType, d.Weights)
	return diags
}

func (r *policyResource) put(ctx context.Context, m *policyModel, diags *diag.Diagnostics) {
	doc, d := m.document(ctx)
	if diags.Append(d...); diags.HasError() {
		return
	}
	if err := doc.Validate(); err != nil {
		diags.AddError("invalid placer policy", err.Error())
		return
	}
	got, err := r.c.placer.PutPolicy(ctx, doc)
	if err != nil {
		diags.AddError("writing the placer policy", err.Error())
		return
	}
	diags.Append(m.fill(ctx, got)...)
}

func (r *policyResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var m policyModel
	if resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...); resp.Diagnostics.HasError() {
		return
	}
	if r.put(ctx, &m, &resp.Diagnostics); !resp.Diagnostics.HasError() {
		resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
	}
}

func (r *policyResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var m policyModel
	if resp.Diagnostics.Append(req.State.Get(ctx, &m)...); resp.Diagnostics.HasError() {
		return
	}
	got, err := r.c.placer.Policy(ctx)
	if errors.Is(err, errNotFound) {
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		resp.Diagnostics.AddError("reading the placer policy", err.Error())
		return
	}
	if resp.Diagnostics.Append(m.fill(ctx, got)...); !resp.Diagnostics.HasError() {
		resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
	}
}

func (r *policyResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var m policyModel
	if resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...); resp.Diagnostics.HasError() {
		return
	}
	if r.put(ctx, &m, &resp.Diagnostics); !resp.Diagnostics.HasError() {
		resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
	}
}

func (r *policyResource) Delete(ctx context.Context, _ resource.DeleteRequest, resp *resource.DeleteResponse) {
	if err := r.c.placer.DeletePolicy(ctx); err != nil && !errors.Is(err, errNotFound) {
		resp.Diagnostics.AddError("deleting the placer policy", err.Error())
	}
}

// ImportState takes `policy`.
func (r *policyResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if req.ID != policyID {
		resp.Diagnostics.AddError("import id", `the placer policy imports as "policy"`)
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), policyID)...)
}
