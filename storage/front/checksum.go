package front

import (
	"io"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/versity/versitygw/s3api/middlewares"
	"github.com/versity/versitygw/s3api/utils"

	"github.com/harvest-platform/harvest/storage/catalog"
)

// sdkSum is one S3 checksum a request may carry in a header.
type sdkSum struct {
	algo  types.ChecksumAlgorithm
	value *string
}

// clientSums are the S3 checksums of a PUT or UploadPart: the client sends
// the value in an x-amz-checksum-<algorithm> header (checked here, at the
// end of the body: BadDigest when it does not match) or as a trailer of a
// chunked body (checked by versitygw's chunk reader). recorded gives the
// checksum once the body is read, nil when the client sent none.
func clientSums(body io.Reader, sums ...sdkSum) (wrapped io.Reader, recorded func() *catalog.Checksum, err error) {
	if tr, ok := body.(middlewares.ChecksumReader); ok && tr.Algorithm() != "" {
		return body, func() *catalog.Checksum {
			if v := tr.Checksum(); v != "" {
				return &catalog.Checksum{Algorithm: strings.ToUpper(tr.Algorithm()), Value: v}
			}
			return nil
		}, nil
	}
	for _, s := range sums {
		if s.value == nil || *s.value == "" {
			continue
		}
		hr, err := utils.NewHashReader(body, *s.value, utils.HashType(strings.ToLower(string(s.algo))))
		if err != nil {
			return nil, nil, err
		}
		sum := &catalog.Checksum{Algorithm: string(s.algo), Value: *s.value}
		return hr, func() *catalog.Checksum { return sum }, nil
	}
	return body, func() *catalog.Checksum { return nil }, nil
}

// checksumFields sets the S3 output field of a recorded checksum.
func checksumFields(c *catalog.Checksum, crc32, crc32c, sha1, sha256, crc64 **string) {
	if c == nil {
		return
	}
	v := c.Value
	switch types.ChecksumAlgorithm(c.Algorithm) {
	case types.ChecksumAlgorithmCrc32:
		*crc32 = &v
	case types.ChecksumAlgorithmCrc32c:
		*crc32c = &v
	case types.ChecksumAlgorithmSha1:
		*sha1 = &v
	case types.ChecksumAlgorithmSha256:
		*sha256 = &v
	case types.ChecksumAlgorithmCrc64nvme:
		*crc64 = &v
	}
}
