package provider

import (
	"context"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

var (
	_ resource.Resource                = (*platformResource)(nil)
	_ resource.ResourceWithConfigure   = (*platformResource)(nil)
	_ resource.ResourceWithImportState = (*platformResource)(nil)
)

// platformID is the id of a cluster's Harvest deployment.
const platformID = "harvest"

// platformResource registers the jobs/ HCL (harvest-storage, harvest-blob,
// harvest-placer) on Nomad with the given variables, keeps the credentials
// in Nomad variables, and waits until every instance is healthy in Consul.
type platformResource struct{ c *clients }

func newPlatformResource() resource.Resource { return &platformResource{} }

type platformModel struct {
	ID                types.String `tfsdk:"id"`
	Datacenters       types.List   `tfsdk:"datacenters"`
	HarvestBinDir     types.String `tfsdk:"harvest_bin_dir"`
	MinIOPath         types.String `tfsdk:"minio_path"`
	StorageDataRoot   types.String `tfsdk:"storage_data_root"`
	StorageCapacityMB types.Int64  `tfsdk:"storage_capacity_mb"`
	StorageMemoryMB   types.Int64  `tfsdk:"storage_memory_mb"`
	StorageDriver     types.String `tfsdk:"storage_driver"`
	NomadAddress      types.String `tfsdk:"nomad_address"`
	ConsulAddress     types.String `tfsdk:"consul_address"`
	ConsulPrefix      types.String `tfsdk:"consul_prefix"`
	PlacerHTTPPort    types.Int64  `tfsdk:"placer_http_port"`
	PlacerProxyPort   types.Int64  `tfsdk:"placer_proxy_port"`
	PlacerExtraConfig types.String `tfsdk:"placer_extra_config"`
	BlobS3Port        types.Int64  `tfsdk:"blob_s3_port"`
	BlobAdminPort     types.Int64  `tfsdk:"blob_admin_port"`
	Replicas          types.Int64  `tfsdk:"replicas"`
	BlobAccessKey     types.String `tfsdk:"blob_access_key"`
	BlobSecretKey     types.String `tfsdk:"blob_secret_key"`
	StorageAccessKey  types.String `tfsdk:"storage_access_key"`
	StorageSecretKey  types.String `tfsdk:"storage_secret_key"`
	PlacerToken       types.String `tfsdk:"placer_token"`
	BlobAdminToken    types.String `tfsdk:"blob_admin_token"`
	Namespace         types.String `tfsdk:"namespace"`
	NomadCAFile       types.String `tfsdk:"nomad_ca_file"`
	ConsulCAFile      types.String `tfsdk:"consul_ca_file"`
	TLSCertFile       types.String `tfsdk:"tls_cert_file"`
	TLSKeyFile        types.String `tfsdk:"tls_key_file"`
	ACLPolicies       types.Map    `tfsdk:"acl_policies"`
	ConsulAuthMethod  types.String `tfsdk:"consul_auth_method"`
	HealthTimeout     types.String `tfsdk:"health_timeout"`
}

func (r *platformResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_platform"
}

func (r *platformResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	str := func(desc, def string) schema.StringAttribute {
		return schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString(def), Description: desc}
	}
	required := func(desc string) schema.StringAttribute {
		return schema.StringAttribute{Required: true, Description: desc}
	}
	secret := func(desc string) schema.StringAttribute {
		return schema.StringAttribute{Required: true, Sensitive: true, Description: desc}
	}
	port := func(desc string, def int64) schema.Int64Attribute {
		return schema.Int64Attribute{Optional: true, Computed: true, Default: int64default.StaticInt64(def), Description: desc,
			Validators: []validator.Int64{int64validator.Between(1, 65535)}}
	}
	number := func(desc string, def, lo, hi int64) schema.Int64Attribute {
		return schema.Int64Attribute{Optional: true, Computed: true, Default: int64default.StaticInt64(def), Description: desc,
			Validators: []validator.Int64{int64validator.Between(lo, hi)}}
	}
	resp.Schema = schema.Schema{
		Description: "Harvest on a Nomad cluster: registers the `jobs/` HCL — `harvest-storage` (a MinIO server on " +
			"every harvested client), `harvest-blob` (the S3 front) and `harvest-placer` (classifier and admission " +
			"proxy) — with these variables, keeps the credentials in the Nomad variables `nomad/jobs/harvest-storage`, " +
			"`nomad/jobs/harvest-blob` and `nomad/jobs/harvest-placer`, and waits until every instance is running and passing its Consul checks. " +
			"Destroying it stops and purges the jobs and deletes the variables; the stored data (the storage nodes' " +
			"folders and Harvest's Consul KV state) is kept.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{Computed: true, Description: "Always `harvest`.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
			"datacenters": schema.ListAttribute{Optional: true, Computed: true, ElementType: types.StringType,
				Default:     listdefault.StaticValue(types.ListValueMust(types.StringType, []attr.Value{types.StringValue("dc1")})),
				Description: "Nomad datacenters the platform runs in."},
			"harvest_bin_dir":     required("Folder holding `harvest-placer` and `harvest-blob` on every client."),
			"minio_path":          required("The MinIO server binary on every client."),
			"storage_data_root":   required("Host folder of the storage nodes; each keeps its data in `<root>/<node name>`."),
			"storage_capacity_mb": number("Harvestable storage each storage node offers, in MiB.", 10240, 1, 1<<40),
			"storage_memory_mb":   number("Memory of each storage node's MinIO, in MiB.", 512, 64, 1<<20),
			"storage_driver":      str("Task driver of the storage nodes (`raw_exec` or `exec`).", "raw_exec"),
			"nomad_address":       required("Nomad HTTP API as the placer task reaches it."),
			"consul_address":      required("Consul HTTP API as the placer and front tasks reach it."),
			"consul_prefix":       str("Consul KV prefix of Harvest's state.", "harvest/"),
			"placer_http_port":    port("Static port of the placer's HTTP API.", 4650),
			"placer_proxy_port":   port("Static port of the admission proxy (users' `NOMAD_ADDR`).", 4656),
			"placer_extra_config": str("More placer HCL (packing, partition, greylist, escalation blocks).", ""),
			"blob_s3_port":        port("Static port of the blob front's S3 API.", 9100),
			"blob_admin_port":     port("Static port of the blob front's admin API.", 9101),
			"replicas":            number("Replicas of an object whose bucket does not say.", 3, 1, 9),
			"blob_access_key":     secret("S3 access key clients use with the blob front."),
			"blob_secret_key":     secret("S3 secret key clients use with the blob front."),
			"storage_access_key":  secret("Access key of the storage nodes' MinIO servers (only the front uses it)."),
			"storage_secret_key":  secret("Secret key of the storage nodes' MinIO servers (at least 8 characters)."),
			"placer_token": secret("Token the placer's API accepts for changes (its `acl.tokens`; at least 16 characters), kept in " +
				"the Nomad variable `nomad/jobs/harvest-placer`. Give the provider the same `placer_token` to manage tenants and the policy."),
			"health_timeout": str("How long to wait for every instance to be healthy.", "5m"),
			"namespace": str("Nomad namespace of the platform's jobs (created when missing). On a cluster with ACLs give the "+
				"platform a namespace of its own: its jobs' workload identities get their Consul roles by it.", "default"),
			"nomad_ca_file":  str("CA bundle, a path on every client, the placer verifies Nomad's certificate with (\"\": none).", ""),
			"consul_ca_file": str("CA bundle, a path on every client, the placer and the front verify Consul's certificate with.", ""),
			"tls_cert_file":  str("Certificate, a path on every client, the placer's API and proxy and the front's S3 and admin listeners serve HTTPS with (\"\": plain HTTP).", ""),
			"tls_key_file":   str("Its key.", ""),
			"acl_policies": schema.MapAttribute{Optional: true, ElementType: types.StringType,
				Description: "On a cluster with ACLs: the rendered policies of `jobs/acl` (`placer.nomad`, `placer.consul`, `blob.consul`), as the " +
					"module passes them. The placer's Nomad policy is attached to the `harvest-placer` job (its workload identity is its token); " +
					"the Consul policies become the roles `harvest-placer` and `harvest-blob`, which a binding rule of `consul_auth_method` gives " +
					"to the tasks of those jobs in `namespace`. Removed with the platform."},
			"consul_auth_method": str("Consul auth method that accepts Nomad's workload identities (`nomad setup consul` makes `nomad-workloads`).", "nomad-workloads"),
			"blob_admin_token": schema.StringAttribute{Optional: true, Computed: true, Sensitive: true, Default: stringdefault.StaticString(""),
				Description: "Token of the blob front's admin API (POST /v1/scrub, /v1/gc, /v1/safe-mode/confirm; at least 16 characters), " +
					"kept in the Nomad variable `nomad/jobs/harvest-blob`; empty: those endpoints refuse every request. Give the provider the same `blob_admin_token`."},
		},
	}
}

func (r *platformResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.c = configured(req.ProviderData, &resp.Diagnostics)
}

func (r *platformResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.apply(ctx, req.Plan.Get, &resp.State, &resp.Diagnostics)
}

func (r *platformResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.apply(ctx, req.Plan.Get, &resp.State, &resp.Diagnostics)
}

func (r *platformResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var m platformModel
	if resp.Diagnostics.Append(req.State.Get(ctx, &m)...); resp.Diagnostics.HasError() {
		return
	}
	d, err := r.deployer(m)
	if err == nil {
		var present bool
		present, err = d.read(&m)
		if err == nil && !present {
			resp.State.RemoveResource(ctx)
			return
		}
	}
	if err != nil {
		resp.Diagnostics.AddError("reading the platform", err.Error())
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (r *platformResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var m platformModel
	if resp.Diagnostics.Append(req.State.Get(ctx, &m)...); resp.Diagnostics.HasError() {
		return
	}
	d, err := r.deployer(m)
	if err == nil {
		err = d.teardown(ctx, timeoutOf(m))
	}
	if err != nil {
		resp.Diagnostics.AddError("removing the platform", err.Error())
	}
}

// ImportState takes `harvest`: every setting is read back from the jobs'
// submitted variables and the credentials from the Nomad variables; only
// health_timeout (not stored anywhere) takes its default.
func (r *platformResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	id, ns, _ := strings.Cut(req.ID, "@")
	if id != platformID {
		resp.Diagnostics.AddError("import id", `the platform imports as "harvest", or "harvest@<namespace>"`)
		return
	}
	if ns == "" {
		ns = "default"
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), platformID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("namespace"), ns)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("consul_auth_method"), "nomad-workloads")...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("health_timeout"), "5m")...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("datacenters"), []string{"dc1"})...)
}

func (r *platformResource) apply(ctx context.Context, get planGetter, state stateSetter, diags *diagnostics) {
	var m platformModel
	if diags.Append(get(ctx, &m)...); diags.HasError() {
		return
	}
	m.ID = types.StringValue(platformID)
	d, err := r.deployer(m)
	if err == nil {
		err = d.deploy(ctx, &m, timeoutOf(m))
	}
	if err != nil {
		diags.AddError("deploying the platform", err.Error())
		return
	}
	diags.Append(state.Set(ctx, &m)...)
}

func timeoutOf(m platformModel) time.Duration {
	if t, err := time.ParseDuration(m.HealthTimeout.ValueString()); err == nil && t > 0 {
		return t
	}
	return 5 * time.Minute
}
