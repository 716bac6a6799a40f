package contract

// The blob tier's bucket policy is a set of ordinary S3 bucket tags, so
// any S3 client and the Terraform provider's harvest_blob_bucket can set
// it; the blob front reads them (storage/front/policy.go).
const (
	// BucketTagReplicas is the replicas of each object: 1 to 9.
	BucketTagReplicas = "harvest-replicas"
	// BucketTagDiversity is BucketDiversityStrict or BucketDiversityDegraded.
	BucketTagDiversity = "harvest-diversity"
	// BucketTagRead is BucketReadProxy (the default) or BucketReadRedirect.
	BucketTagRead = "harvest-read"
)

// Values of the bucket policy tags.
const (
	// BucketDiversityStrict refuses writes that cannot keep every diversity rule.
	BucketDiversityStrict = "strict"
	// BucketDiversityDegraded accepts them, reports them and repairs later.
	BucketDiversityDegraded = "degraded"
	// BucketReadProxy streams GETs through the front, checked block by block.
	BucketReadProxy = "proxy"
	// BucketReadRedirect answers GETs with a 307 to a presigned URL on a replica.
	BucketReadRedirect = "redirect"
)
