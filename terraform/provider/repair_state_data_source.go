package provider

import (
	"context"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
)

var (
	_ datasource.DataSource              = (*repairStateDataSource)(nil)
	_ datasource.DataSourceWithConfigure = (*repairStateDataSource)(nil)
)

// repairStateDataSource reads the blob front's repair state (GET /v1/status
// of its admin API).
type repairStateDataSource struct{ c *clients }

func newRepairStateDataSource() datasource.DataSource { return &repairStateDataSource{} }

type repairStateModel struct {
	Replicas          int64             `tfsdk:"replicas"`
	Objects           int64             `tfsdk:"objects"`
	UnderReplicated   int64             `tfsdk:"under_replicated"`
	Lost              int64             `tfsdk:"lost"`
	Repaired          int64             `tfsdk:"repaired_replicas"`
	RepairRatePerHour float64           `tfsdk:"repair_rate_per_hour"`
	ETASeconds        float64           `tfsdk:"eta_seconds"`
	LastScan          string            `tfsdk:"last_scan"`
	Nodes             []storageNodeInfo `tfsdk:"nodes"`
}

type storageNodeInfo struct {
	ID            string `tfsdk:"id"`
	Tenant        string `tfsdk:"tenant"`
	Row           int64  `tfsdk:"row"`
	Col           int64  `tfsdk:"col"`
	Up            bool   `tfsdk:"up"`
	Busy          bool   `tfsdk:"busy"`
	UsedBytes     int64  `tfsdk:"used_bytes"`
	CapacityBytes int64  `tfsdk:"capacity_bytes"`
}

func (d *repairStateDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_blob_repair_state"
}

func (d *repairStateDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	num := func(desc string) schema.Int64Attribute {
		return schema.Int64Attribute{Computed: true, Description: desc}
	}
	resp.Schema = schema.Schema{
		Description: "The blob tier's repair state: objects under-replicated or lost after reimages, the repair " +
			"rate and its ETA, and each storage node's grid cell, standing and use.",
		Attributes: map[string]schema.Attribute{
			"replicas":             num("The front's default replication factor."),
			"objects":              num("Objects in the catalogue."),
			"under_replicated":     num("Objects with fewer replicas than their bucket wants."),
			"lost":                 num("Objects with no replica left."),
			"repaired_replicas":    num("Replicas re-created since the front started."),
			"repair_rate_per_hour": schema.Float64Attribute{Computed: true, Description: "Replicas re-created per hour over the last ten minutes."},
			"eta_seconds":          schema.Float64Attribute{Computed: true, Description: "Time to repair the under-replicated objects at that rate."},
			"last_scan":            schema.StringAttribute{Computed: true, Description: "When the repairer last scanned the catalogue (RFC 3339)."},
			"nodes": schema.ListNestedAttribute{Computed: true, Description: "The storage nodes.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"id":             schema.StringAttribute{Computed: true, Description: "Node name."},
					"tenant":         schema.StringAttribute{Computed: true, Description: "Its primary tenant."},
					"row":            num("Grid row: the tenant's peak CPU, low to high."),
					"col":            num("Grid column: the tenant's reimage rate, infrequent to frequent."),
					"up":             schema.BoolAttribute{Computed: true, Description: "Reachable and its identity marker intact."},
					"busy":           schema.BoolAttribute{Computed: true, Description: "Its primary tenant is busy (reads avoid it)."},
					"used_bytes":     num("Bytes of replicas it holds."),
					"capacity_bytes": num("Bytes its owner declared harvestable."),
				}}},
		},
	}
}

func (d *repairStateDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.c = configured(req.ProviderData, &resp.Diagnostics)
}

func (d *repairStateDataSource) Read(ctx context.Context, _ datasource.ReadRequest, resp *datasource.ReadResponse) {
	s, err := d.c.blob.status(ctx)
	if err != nil {
		resp.Diagnostics.AddError("reading the blob tier's repair state", err.Error())
		return
	}
	m := repairStateModel{Replicas: int64(s.Replicas), Objects: int64(s.Objects), UnderReplicated: int64(s.UnderReplicated), Lost: int64(s.Lost),
		Repaired: s.Repaired, RepairRatePerHour: s.RepairRatePerHour, ETASeconds: s.ETASeconds,
		LastScan: s.LastScan.UTC().Format(time.RFC3339), Nodes: []storageNodeInfo{}}
	for _, n := range s.Nodes {
		m.Nodes = append(m.Nodes, storageNodeInfo{ID: n.ID, Tenant: n.Tenant, Row: int64(n.Row), Col: int64(n.Col), Up: n.Up, Busy: n.Busy,
			UsedBytes: n.Used, CapacityBytes: n.Capacity})
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
