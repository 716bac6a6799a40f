package front

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/versity/versitygw/s3err"

	"github.com/harvest-platform/harvest/contract"
	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/storage/catalog"
	"github.com/harvest-platform/harvest/storage/grid"
	"github.com/harvest-platform/harvest/storage/objects"
)

// A bucket's durability policy is set with ordinary S3 bucket tags, so any
// client (aws s3api put-bucket-tagging, Terraform) can set it:
//
//	harvest-replicas   = 1..9        replicas of each object
//	harvest-diversity  = strict      refuse writes that cannot keep every diversity rule
//	                   | degraded    accept them, report and repair later
//	harvest-read       = proxy       GETs stream through the front, checked block by block (the default)
//	                   | redirect    GETs answer 307 with a short-lived presigned URL on a replica (redirect.go)
//
// A bucket without a tag takes the default: the policy document's replicas
// or diversity, else the front's `replicas` or `strict` (declared.go).
const (
	tagReplicas  = contract.BucketTagReplicas
	tagDiversity = contract.BucketTagDiversity
	tagRead      = contract.BucketTagRead
)

// policy is what a bucket asks of placement.
type policy struct {
	replicas int
	strict   bool
}

// placement is the policy as the write path (storage/objects) and the
// upkeep take it.
func (p policy) placement() objects.Policy {
	return objects.Policy{Replicas: p.replicas, Strict: p.strict}
}

// replicasTag reads a harvest-replicas value: 1 to one replica per grid cell.
func replicasTag(v string) (int, bool) {
	n, err := strconv.Atoi(v)
	return n, err == nil && n >= 1 && n <= grid.Size*grid.Size
}

// policyOf is a bucket's policy: its tags over the default.
func (b *Backend) policyOf(info *bucketInfo) policy {
	p := b.defaultPolicy().policy
	if n, ok := replicasTag(info.Tags[tagReplicas]); ok {
		p.replicas = n
	}
	switch info.Tags[tagDiversity] {
	case contract.BucketDiversityStrict:
		p.strict = true
	case contract.BucketDiversityDegraded:
		p.strict = false
	}
	return p
}

// allEntries lists every object of every bucket, and each bucket's policy.
func (b *Backend) allEntries(ctx context.Context) ([]catalog.Entry, map[string]policy, error) {
	pairs, err := b.kv.List(ctx, b.prefix+"blob/buckets/")
	if err != nil {
		return nil, nil, err
	}
	var out []catalog.Entry
	policies := map[string]policy{}
	for _, p := range pairs {
		var info bucketInfo
		if err := json.Unmarshal(p.Value, &info); err != nil {
			continue
		}
		policies[info.Name] = b.policyOf(&info)
		entries, _, err := b.cat.List(ctx, info.Name, "", "", -1)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, entries...)
	}
	return out, policies, nil
}

func validateTags(tags map[string]string) error {
	if v, ok := tags[tagReplicas]; ok {
		if _, ok := replicasTag(v); !ok {
			return s3err.InvalidArgumentError{ArgumentName: tagReplicas, ArgumentValue: v,
				Description: "harvest-replicas must be a whole number from 1 to 9"}
		}
	}
	if v, ok := tags[tagDiversity]; ok && v != contract.BucketDiversityStrict && v != contract.BucketDiversityDegraded {
		return s3err.InvalidArgumentError{ArgumentName: tagDiversity, ArgumentValue: v,
			Description: `harvest-diversity must be "strict" or "degraded"`}
	}
	if v, ok := tags[tagRead]; ok && v != readProxy && v != readRedirect {
		return s3err.InvalidArgumentError{ArgumentName: tagRead, ArgumentValue: v,
			Description: `harvest-read must be "proxy" or "redirect"`}
	}
	return nil
}

func (b *Backend) GetBucketTagging(ctx context.Context, bucket string) (map[string]string, error) {
	req := b.request(ctx) // not fasthttp's context, which is reused once the request ends
	defer req.cancel()
	ctx = req.ctx
	info, err := b.bucket(ctx, bucket)
	if err != nil {
		return nil, err
	}
	if len(info.Tags) == 0 {
		return nil, s3err.GetAPIError(s3err.ErrBucketTaggingNotFound)
	}
	return info.Tags, nil
}

// PutBucketTagging sets the bucket's tags, its policy among them; objects
// already written are brought to a new replica count by the repairer.
func (b *Backend) PutBucketTagging(ctx context.Context, bucket string, tags map[string]string) error {
	req := b.request(ctx) // not fasthttp's context, which is reused once the request ends
	defer req.cancel()
	ctx = req.ctx
	if err := validateTags(tags); err != nil {
		return err
	}
	if err := b.updateBucket(ctx, bucket, func(info *bucketInfo) { info.Tags = tags }); err != nil {
		return err
	}
	b.upkeep.KickRepair()
	return nil
}

func (b *Backend) DeleteBucketTagging(ctx context.Context, bucket string) error {
	req := b.request(ctx) // not fasthttp's context, which is reused once the request ends
	defer req.cancel()
	ctx = req.ctx
	return b.updateBucket(ctx, bucket, func(info *bucketInfo) { info.Tags = nil })
}

// updateBucket changes a bucket's record under check-and-set and mirrors it
// on the nodes.
func (b *Backend) updateBucket(ctx context.Context, bucket string, fn func(*bucketInfo)) error {
	key := b.bucketKey(bucket)
	var data []byte
	err := history.Update(ctx, b.kv, key, func(old []byte, exists bool) ([]byte, error) {
		if !exists {
			return nil, s3err.GetBucketErr(s3err.ErrNoSuchBucket, bucket)
		}
		var info bucketInfo
		if err := json.Unmarshal(old, &info); err != nil {
			return nil, &history.CorruptError{Key: key, Err: err}
		}
		fn(&info)
		var err error
		data, err = json.Marshal(info)
		return data, err
	})
	if err == nil {
		b.mirrorBucket(ctx, bucket, data)
	}
	return err
}
