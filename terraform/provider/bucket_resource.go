package provider

import (
	"context"
	"fmt"
	"strconv"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/minio/minio-go/v7"

	"github.com/harvest-platform/harvest/contract"
)

var (
	_ resource.Resource                = (*bucketResource)(nil)
	_ resource.ResourceWithConfigure   = (*bucketResource)(nil)
	_ resource.ResourceWithImportState = (*bucketResource)(nil)
)

// The blob front reads a bucket's policy from these standard bucket tags
// (storage/front/policy.go); other tags are left as they are.
const (
	tagReplicas  = contract.BucketTagReplicas
	tagDiversity = contract.BucketTagDiversity
	tagRead      = contract.BucketTagRead
)

// bucketResource is a bucket of the harvested blob tier, created through the
// front's S3 API, with its replication policy as bucket tags.
type bucketResource struct{ c *clients }

func newBucketResource() resource.Resource { return &bucketResource{} }

type bucketModel struct {
	ID           types.String `tfsdk:"id"`
	Name         types.String `tfsdk:"name"`
	Replicas     types.Int64  `tfsdk:"replicas"`
	Diversity    types.String `tfsdk:"diversity"`
	Read         types.String `tfsdk:"read"`
	ForceDestroy types.Bool   `tfsdk:"force_destroy"`
}

func (r *bucketResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_blob_bucket"
}

func (r *bucketResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "A bucket of the harvested blob tier. Its replication factor, diversity rule and read mode are the " +
			"bucket tags `harvest-replicas`, `harvest-diversity` and `harvest-read`, which any S3 client can also read; changing " +
			"the first two re-replicates the objects already written.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{Computed: true, Description: "The bucket name.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
			"name": schema.StringAttribute{Required: true, PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators:  []validator.String{stringvalidator.LengthBetween(3, 63), stringvalidator.RegexMatches(bucketName, "must be an S3 bucket name: lower-case letters, digits, '.' and '-'")},
				Description: "The bucket name (S3 rules)."},
			"replicas": schema.Int64Attribute{Optional: true, Validators: []validator.Int64{int64validator.Between(1, 9)},
				Description: "Replicas of each object (default: the front's)."},
			"diversity": schema.StringAttribute{Optional: true, Validators: []validator.String{stringvalidator.OneOf(contract.BucketDiversityStrict, contract.BucketDiversityDegraded)},
				Description: "`strict` refuses a write that cannot keep every diversity rule; `degraded` relaxes them in order."},
			"read": schema.StringAttribute{Optional: true, Validators: []validator.String{stringvalidator.OneOf(contract.BucketReadProxy, contract.BucketReadRedirect)},
				Description: "`proxy` (the default) streams GETs through the front, checked block by block; `redirect` answers them " +
					"with a 307 to a one-minute presigned URL on a replica's node, for clients that follow redirects (bucket tag `harvest-read`)."},
			"force_destroy": schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(false),
				Description: "Delete every object when the bucket is destroyed (otherwise a bucket with objects is not destroyed)."},
		},
	}
}

func (r *bucketResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.c = configured(req.ProviderData, &resp.Diagnostics)
}

// setPolicy writes the harvest-* tags, keeping the bucket's other tags.
func (r *bucketResource) setPolicy(ctx context.Context, s3 *minio.Client, m *bucketModel) error {
	bucket := m.Name.ValueString()
	current, err := bucketTags(ctx, s3, bucket)
	if err != nil {
		return err
	}
	delete(current, tagReplicas)
	delete(current, tagDiversity)
	delete(current, tagRead)
	if v := int64Ptr(m.Replicas); v != nil {
		current[tagReplicas] = strconv.FormatInt(*v, 10)
	}
	if v := stringPtr(m.Diversity); v != nil {
		current[tagDiversity] = *v
	}
	if v := stringPtr(m.Read); v != nil {
		current[tagRead] = *v
	}
	return putBucketTags(ctx, s3, bucket, current)
}

func (r *bucketResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var m bucketModel
	if resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...); resp.Diagnostics.HasError() {
		return
	}
	s3, err := r.c.blob.s3()
	if err == nil {
		err = s3.MakeBucket(ctx, m.Name.ValueString(), minio.MakeBucketOptions{})
	}
	if err == nil {
		err = r.setPolicy(ctx, s3, &m)
	}
	if err != nil {
		resp.Diagnostics.AddError("creating the bucket", err.Error())
		return
	}
	m.ID = m.Name
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (r *bucketResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var m bucketModel
	if resp.Diagnostics.Append(req.State.Get(ctx, &m)...); resp.Diagnostics.HasError() {
		return
	}
	s3, err := r.c.blob.s3()
	if err != nil {
		resp.Diagnostics.AddError("reading the bucket", err.Error())
		return
	}
	bucket := m.Name.ValueString()
	exists, err := s3.BucketExists(ctx, bucket)
	if err == nil && !exists {
		resp.State.RemoveResource(ctx)
		return
	}
	var tags map[string]string
	if err == nil {
		tags, err = bucketTags(ctx, s3, bucket)
	}
	if err != nil {
		resp.Diagnostics.AddError("reading the bucket", err.Error())
		return
	}
	m.ID = m.Name
	m.Replicas, m.Diversity, m.Read = types.Int64Null(), types.StringNull(), types.StringNull()
	if v, ok := tags[tagReplicas]; ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			resp.Diagnostics.AddError("reading the bucket", fmt.Sprintf("bucket %s: tag %s=%q is not a number", bucket, tagReplicas, v))
			return
		}
		m.Replicas = types.Int64Value(n)
	}
	if v, ok := tags[tagDiversity]; ok {
		m.Diversity = types.StringValue(v)
	}
	if v, ok := tags[tagRead]; ok {
		m.Read = types.StringValue(v)
	}
	if m.ForceDestroy.IsNull() { // after import
		m.ForceDestroy = types.BoolValue(false)
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (r *bucketResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var m bucketModel
	if resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...); resp.Diagnostics.HasError() {
		return
	}
	s3, err := r.c.blob.s3()
	if err == nil {
		err = r.setPolicy(ctx, s3, &m)
	}
	if err != nil {
		resp.Diagnostics.AddError("updating the bucket", err.Error())
		return
	}
	m.ID = m.Name
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (r *bucketResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var m bucketModel
	if resp.Diagnostics.Append(req.State.Get(ctx, &m)...); resp.Diagnostics.HasError() {
		return
	}
	s3, err := r.c.blob.s3()
	if err == nil && m.ForceDestroy.ValueBool() {
		err = emptyBucket(ctx, s3, m.Name.ValueString())
	}
	if err == nil {
		err = s3.RemoveBucket(ctx, m.Name.ValueString())
	}
	if err != nil && minio.ToErrorResponse(err).Code != "NoSuchBucket" {
		resp.Diagnostics.AddError("deleting the bucket", err.Error())
	}
}

// ImportState takes the bucket name.
func (r *bucketResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("name"), req.ID)...)
}
