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

	"github.com/harvest-platform/harvest/api"
	"github.com/harvest-platform/harvest/internal/connect"
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
	NomadCAFile      types.String `tfsdk:"nomad_ca_file"`
	NomadCertFile    types.String `tfsdk:"nomad_cert_file"`
	NomadKeyFile     types.String `tfsdk:"nomad_key_file"`
	ConsulAddress    types.String `tfsdk:"consul_address"`
	ConsulToken      types.String `tfsdk:"consul_token"`
	ConsulCAFile     types.String `tfsdk:"consul_ca_file"`
	ConsulCertFile   types.String `tfsdk:"consul_cert_file"`
	ConsulKeyFile    types.String `tfsdk:"consul_key_file"`
	PlacerAddress    types.String `tfsdk:"placer_address"`
	PlacerToken      types.String `tfsdk:"placer_token"`
	BlobEndpoint     types.String `tfsdk:"blob_endpoint"`
	BlobAdminAddress types.String `tfsdk:"blob_admin_address"`
	BlobAdminToken   types.String `tfsdk:"blob_admin_token"`
	BlobAccessKey    types.String `tfsdk:"blob_access_key"`
	BlobSecretKey    types.String `tfsdk:"blob_secret_key"`
	CAFile           types.String `tfsdk:"ca_file"`
	CertFile         types.String `tfsdk:"cert_file"`
	KeyFile          types.String `tfsdk:"key_file"`
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
			"nomad_address":      str("Nomad HTTP API, e.g. `https://127.0.0.1:4646` (default: `NOMAD_ADDR`, then `http://127.0.0.1:4646`).", false),
			"nomad_token":        str("Nomad ACL token (default: `NOMAD_TOKEN`).", true),
			"nomad_ca_file":      str("CA certificate to verify Nomad's (default: `NOMAD_CACERT`).", false),
			"nomad_cert_file":    str("Client certificate for Nomad's mutual TLS (default: `NOMAD_CLIENT_CERT`).", false),
			"nomad_key_file":     str("Its key (default: `NOMAD_CLIENT_KEY`).", false),
			"consul_address":     str("Consul HTTP API, e.g. `https://127.0.0.1:8501` (default: `CONSUL_HTTP_ADDR`, then `localhost:8500`).", false),
			"consul_token":       str("Consul ACL token (default: `CONSUL_HTTP_TOKEN`).", true),
			"consul_ca_file":     str("CA certificate to verify Consul's (default: `CONSUL_CACERT`).", false),
			"consul_cert_file":   str("Client certificate for Consul's mutual TLS (default: `CONSUL_CLIENT_CERT`).", false),
			"consul_key_file":    str("Its key (default: `CONSUL_CLIENT_KEY`).", false),
			"placer_address":     str("The placer's HTTP API, e.g. `https://127.0.0.1:4650` (default: `HARVEST_PLACER_ADDR`, then `http://127.0.0.1:4650`).", false),
			"placer_token":       str("Token for the placer's API: one of its acl tokens, or a Nomad token with the Harvest capability (default: `HARVEST_PLACER_TOKEN`, then `NOMAD_TOKEN`).", true),
			"blob_endpoint":      str("The blob front's S3 endpoint, host:port or `https://host:port` (default: `HARVEST_BLOB_ENDPOINT`, then `127.0.0.1:9100`).", false),
			"blob_admin_address": str("The blob front's admin API, e.g. `https://127.0.0.1:9101` (default: `HARVEST_BLOB_ADMIN_ADDR`, then `http://127.0.0.1:9101`).", false),
			"blob_admin_token":   str("Token of the blob front's admin API (default: `HARVEST_BLOB_ADMIN_TOKEN`).", true),
			"blob_access_key":    str("S3 access key of the blob front (default: `HARVEST_BLOB_ACCESS_KEY`).", true),
			"blob_secret_key":    str("S3 secret key of the blob front (default: `HARVEST_BLOB_SECRET_KEY`).", true),
			"ca_file":            str("CA certificate to verify the placer's and the blob front's (default: `HARVEST_CACERT`).", false),
			"cert_file":          str("Client certificate for the placer and the blob front, when they want one (default: `HARVEST_CLIENT_CERT`).", false),
			"key_file":           str("Its key (default: `HARVEST_CLIENT_KEY`).", false),
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
		if e := os.Getenv(env); env != "" && e != "" {
			return e
		}
		return def
	}
	// Nomad's and Consul's settings go over the environment (connect starts
	// from the api packages' DefaultConfig()); an attribute left out keeps
	// the environment's value.
	val := func(v types.String) string { return pick(v, "", "") }
	harvestTLS := connect.ClientTLSFromEnv()
	harvestTLS.CAFile = pick(m.CAFile, connect.EnvCACert, "")
	harvestTLS.CertFile = pick(m.CertFile, connect.EnvClientCert, "")
	harvestTLS.KeyFile = pick(m.KeyFile, connect.EnvClientKey, "")
	c := &clients{
		nomadConn: connect.Nomad{Address: val(m.NomadAddress), Token: val(m.NomadToken), CAFile: val(m.NomadCAFile),
			CertFile: val(m.NomadCertFile), KeyFile: val(m.NomadKeyFile)},
		consulConn: connect.Consul{Address: val(m.ConsulAddress), Token: val(m.ConsulToken), CAFile: val(m.ConsulCAFile),
			CertFile: val(m.ConsulCertFile), KeyFile: val(m.ConsulKeyFile)},
		placer: api.Client{Name: "placer", Address: pick(m.PlacerAddress, "HARVEST_PLACER_ADDR", "http://127.0.0.1:4650"),
			Token: pick(m.PlacerToken, connect.EnvPlacerToken, os.Getenv("NOMAD_TOKEN")), TLS: harvestTLS},
		blob: blobSettings{
			endpoint:   pick(m.BlobEndpoint, "HARVEST_BLOB_ENDPOINT", "127.0.0.1:9100"),
			admin:      pick(m.BlobAdminAddress, "HARVEST_BLOB_ADMIN_ADDR", "http://127.0.0.1:9101"),
			accessKey:  pick(m.BlobAccessKey, "HARVEST_BLOB_ACCESS_KEY", ""),
			secretKey:  pick(m.BlobSecretKey, "HARVEST_BLOB_SECRET_KEY", ""),
			adminToken: pick(m.BlobAdminToken, connect.EnvBlobAdminToken, ""),
			tls:        harvestTLS,
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
