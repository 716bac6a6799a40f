package provider

import (
	"context"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

var (
	_ datasource.DataSource              = (*classesDataSource)(nil)
	_ datasource.DataSourceWithConfigure = (*classesDataSource)(nil)
)

// classesDataSource reads the placer's class table (GET /v1/classes).
type classesDataSource struct{ c *clients }

func newClassesDataSource() datasource.DataSource { return &classesDataSource{} }

type classesModel struct {
	Generated    types.String `tfsdk:"generated"`
	Classes      []classModel `tfsdk:"classes"`
	Unclassified []string     `tfsdk:"unclassified"`
}

type classModel struct {
	Name    string   `tfsdk:"name"`
	Pattern string   `tfsdk:"pattern"`
	Average float64  `tfsdk:"average"`
	Peak    float64  `tfsdk:"peak"`
	Tenants []string `tfsdk:"tenants"`
	Nodes   []string `tfsdk:"nodes"`
}

func (d *classesDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_classes"
}

func (d *classesDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	strings := schema.ListAttribute{Computed: true, ElementType: types.StringType}
	resp.Schema = schema.Schema{
		Description: "The placer's class table: the primary tenants grouped by utilisation pattern (periodic, " +
			"constant, unpredictable) and k-means class, with the nodes that carry each class label.",
		Attributes: map[string]schema.Attribute{
			"generated": schema.StringAttribute{Computed: true, Description: "When the table was computed (RFC 3339)."},
			"classes": schema.ListNestedAttribute{Computed: true, Description: "The classes, as the placer names them.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"name":    schema.StringAttribute{Computed: true, Description: "Class label, e.g. `periodic-2`."},
					"pattern": schema.StringAttribute{Computed: true, Description: "`periodic`, `constant` or `unpredictable`."},
					"average": schema.Float64Attribute{Computed: true, Description: "Node-weighted mean CPU percent."},
					"peak":    schema.Float64Attribute{Computed: true, Description: "Node-weighted mean peak CPU percent."},
					"tenants": strings,
					"nodes":   strings,
				}}},
			"unclassified": schema.ListAttribute{Computed: true, ElementType: types.StringType,
				Description: "Tenants the classifier could not place (too little history)."},
		},
	}
}

func (d *classesDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.c = configured(req.ProviderData, &resp.Diagnostics)
}

func (d *classesDataSource) Read(ctx context.Context, _ datasource.ReadRequest, resp *datasource.ReadResponse) {
	t, err := d.c.placer.Classes(ctx)
	if err != nil {
		resp.Diagnostics.AddError("reading the class table", err.Error())
		return
	}
	m := classesModel{Generated: types.StringValue(t.Generated.UTC().Format(time.RFC3339)), Classes: []classModel{}, Unclassified: []string{}}
	for _, c := range t.Classes {
		m.Classes = append(m.Classes, classModel{Name: c.Name, Pattern: c.Pattern, Average: c.Average, Peak: c.Peak,
			Tenants: nonNil(c.Tenants), Nodes: nonNil(c.Nodes)})
	}
	for _, u := range t.Unclassified {
		m.Unclassified = append(m.Unclassified, u.Tenant)
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
