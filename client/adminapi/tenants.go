package adminapi

// TenantInfo is upstream's TenantInfo: who administers a tenant and where its namespaces may
// live.
type TenantInfo struct {
	AdminRoles      []string `json:"adminRoles"`
	AllowedClusters []string `json:"allowedClusters"`
}
