// Package provider is Harvest's Terraform provider (terraform-plugin-framework):
// the platform's domain objects as resources — tenant declarations, the
// placer policy, blob buckets and the platform deployment itself (the jobs/
// HCL registered on Nomad) — and data sources for the class table and the
// blob tier's repair state. It talks only to public APIs: Nomad's, Consul's,
// the placer's HTTP API and the blob front's S3 and admin endpoints.
package provider

import (
	"context"
	"os"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// Address is the provider's registry address (the filesystem mirror's layout
// follows it).
const Address = "registry.terraform.io/harvest-platform/harvest"

var _ provider.Provider = (*harvestProvider)(nil)

type harvestProvider struct{ version string }

// New returns the provider factory providerserver.Serve and the acceptance
// tests use.
func New(version string) func() provider.Provider {
	return func() provider.Provider { return &harvestProvider{version: version} }
}

type providerModel struct {
	NomadAddress     types.String `tfsdk:"nomad_address"`
	NomadToken       types.String `tfsdk:"nomad_token"`
	ConsulAddress    types.String `tfsdk:"consul_address"`
	PlacerAddress    types.String `tfsdk:"placer_address"`
	BlobEndpoint     types.String `tfsdk:"blob_endpoint"`
	BlobAdminAddress types.String `tfsdk:"blob_admin_address"`
	BlobAccessKey    types.String `tfsdk:"blob_access_key"`
	BlobSecretKey    types.String `tfsdk:"blob_secret_key"`
}

func (p *harvestProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "harvest"
	resp.Version = p.version
}

func (p *harvestProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	str := func(desc string, sensitive bool) schema.StringAttribute {
		return schema.StringAttribute{Optional: true, Sensitive: sensitive, Description: desc}
	}
	resp.Schema = schema.Schema{
		Description: "Provisions Harvest — batch jobs and datasets on the spare capacity of latency-critical " +
			"servers — on a Nomad and Consul cluster, and manages its tenants, placer policy and blob buckets.",
		Attributes: map[string]schema.Attribute{
			"nomad_address":      str("Nomad HTTP API, e.g. `http://127.0.0.1:4646` (default: `NOMAD_ADDR`, then that).", false),
			"nomad_token":        str("Nomad ACL token (default: `NOMAD_TOKEN`).", true),
			"consul_address":     str("Consul HTTP API, e.g. `127.0.0.1:8500` (default: `CONSUL_HTTP_ADDR`, then that).", false),
			"placer_address":     str("The placer's HTTP API, e.g. `http://127.0.0.1:4650` (default: `HARVEST_PLACER_ADDR`, then that).", false),
			"blob_endpoint":      str("The blob front's S3 endpoint, host:port, e.g. `127.0.0.1:9100` (default: `HARVEST_BLOB_ENDPOINT`, then that).", false),
			"blob_admin_address": str("The blob front's admin API, e.g. `http://127.0.0.1:9101` (default: `HARVEST_BLOB_ADMIN_ADDR`, then that).", false),
			"blob_access_key":    str("S3 access key of the blob front (default: `HARVEST_BLOB_ACCESS_KEY`).", true),
			"blob_secret_key":    str("S3 secret key of the blob front (default: `HARVEST_BLOB_SECRET_KEY`).", true),
		},
	}
}

// Configure builds the clients; each is used lazily, so a configuration
// that deploys the platform and then uses it plans before it exists.
func (p *harvestProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	var m providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	pick := func(v types.String, env, def string) string {
		if !v.IsNull() && !v.IsUnknown() && v.ValueString() != "" {
			return v.ValueString()
		}
		if e := os.Getenv(env); e != "" {
			return e
		}
		return def
	}
	c := &clients{
		nomadAddress:  pick(m.NomadAddress, "NOMAD_ADDR", "http://127.0.0.1:4646"),
		nomadToken:    pick(m.NomadToken, "NOMAD_TOKEN", ""),
		consulAddress: pick(m.ConsulAddress, "CONSUL_HTTP_ADDR", "127.0.0.1:8500"),
		placer:        placerClient{base: pick(m.PlacerAddress, "HARVEST_PLACER_ADDR", "http://127.0.0.1:4650")},
		blob: blobSettings{
			endpoint:  pick(m.BlobEndpoint, "HARVEST_BLOB_ENDPOINT", "127.0.0.1:9100"),
			admin:     pick(m.BlobAdminAddress, "HARVEST_BLOB_ADMIN_ADDR", "http://127.0.0.1:9101"),
			accessKey: pick(m.BlobAccessKey, "HARVEST_BLOB_ACCESS_KEY", ""),
			secretKey: pick(m.BlobSecretKey, "HARVEST_BLOB_SECRET_KEY", ""),
		},
	}
	resp.ResourceData = c
	resp.DataSourceData = c
}

func (p *harvestProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{newTenantResource, newPolicyResource, newBucketResource, newPlatformResource}
}

func (p *harvestProvider) DataSources(context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{newClassesDataSource, newRepairStateDataSource}
}
