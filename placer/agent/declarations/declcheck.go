package declarations

// The checks of the tenant declarations and the policy document are
// history/declare's (strict JSON bodies, non-negative numbers, the
// classifier thresholds and Algorithm 1's weights; placer/config checks the
// file's with them too); the placer adds bounded request bodies.

import (
	"io"
	"net/http"
)

// maxDeclarationBody bounds a declaration or policy body.
const maxDeclarationBody = 64 << 10

func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	return io.ReadAll(http.MaxBytesReader(w, r.Body, maxDeclarationBody))
}
