# environment/function
terraform import harvest_tenant.search_frontend search/frontend
