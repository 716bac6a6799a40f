package upkeep

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/harvest-platform/harvest/storage/catalog"
	"github.com/harvest-platform/harvest/storage/nodes"
)

// RebuildReport says what a catalogue rebuild found and wrote.
type RebuildReport struct {
	Nodes, Unreachable int
	Buckets, Objects   int
	Written, KeptNewer int
	Buried             int // versions a tombstone says were deleted
	UnreadableReplicas int
}

// Rebuild recreates the bucket records and the catalogue from the storage
// nodes alone: every replica carries its object's entry as user metadata
// and every node the bucket records. Where a key has replicas of several
// versions, the newest wins; entries already in the catalogue that are as
// new or newer are kept. Running it twice writes nothing the second time.
func (u *Upkeep) Rebuild(ctx context.Context) (RebuildReport, error) {
	var rep RebuildReport
	type version struct {
		entry catalog.Entry
		name  string
	}
	tombs, err := u.cat.Tombstones(ctx)
	if err != nil {
		return rep, err
	}
	buried := map[string]catalog.Tombstone{}
	for _, t := range tombs {
		buried[t.Bucket+"\x00"+t.Key] = t
	}
	newest := map[string]*version{} // bucket + "\x00" + key
	for _, node := range u.nodes.List() {
		rep.Nodes++
		c := u.nodes.Client(node.ID)
		restored, err := u.front.RestoreBuckets(ctx, c)
		rep.Buckets += restored
		if err != nil {
			rep.Unreachable++
			continue
		}
		for info := range c.Client.ListObjects(ctx, nodes.DataBucket, minio.ListObjectsOptions{Prefix: "o/", Recursive: true, WithMetadata: true}) {
			if info.Err != nil {
				return rep, fmt.Errorf("node %s: %w", node.ID, info.Err)
			}
			if !u.ownReplica(info.Key) {
				continue // another deployment's
			}
			e, err := catalog.FromMeta(info.UserMetadata)
			if err != nil {
				rep.UnreadableReplicas++
				continue
			}
			if e.ETag == "" { // written before its ETag was known: the node's is the same MD5
				e.ETag = `"` + strings.Trim(info.ETag, `"`) + `"`
			}
			if e.LastModified.IsZero() {
				e.LastModified = info.LastModified.UTC().Truncate(time.Second)
			}
			if e.Size == 0 {
				e.Size = info.Size
			}
			k := e.Bucket + "\x00" + e.Key
			if t, ok := buried[k]; ok && t.Buries(info.Key, e.LastModified) {
				rep.Buried++
				continue
			}
			v := newest[k]
			switch {
			case v == nil || e.LastModified.After(v.entry.LastModified) ||
				(e.LastModified.Equal(v.entry.LastModified) && info.Key > v.name):
				e.Replicas = []catalog.Replica{{Node: node.ID, Name: info.Key}}
				newest[k] = &version{entry: e, name: info.Key}
			case info.Key == v.name && !v.entry.HasReplicaOn(node.ID):
				v.entry.Replicas = append(v.entry.Replicas, catalog.Replica{Node: node.ID, Name: info.Key})
			}
		}
	}
	for _, v := range newest {
		rep.Objects++
		cur, index, err := u.cat.Lookup(ctx, v.entry.Bucket, v.entry.Key)
		if err == nil && !cur.LastModified.Before(v.entry.LastModified) {
			rep.KeptNewer++
			continue
		}
		if err != nil && !errors.Is(err, catalog.ErrNotFound) {
			return rep, err
		}
		if ok, err := u.cat.Replace(ctx, v.entry, index); err != nil {
			return rep, err
		} else if !ok {
			rep.KeptNewer++ // written meanwhile: that is newer
			continue
		}
		rep.Written++
	}
	u.repair.kick()
	return rep, nil
}

// ownReplica says whether a name on a node is one of this deployment's
// replicas: in its folder, or of the form used before folders (o/<hash>/<nonce>).
func (u *Upkeep) ownReplica(name string) bool {
	if strings.HasPrefix(name, u.namePrefix) {
		return true
	}
	parts := strings.Split(name, "/")
	return len(parts) == 3 && parts[0] == "o" && len(parts[1]) == 32
}
