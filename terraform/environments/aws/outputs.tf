output "environment" {
  description = "Which environment this state is (deploy and status check it against --env)."
  value       = var.environment
}

output "platform" {
  description = "What deploy, status and the demo read (modules/incremental_pipeline's `platform`)."
  value       = module.pipeline.platform
}
