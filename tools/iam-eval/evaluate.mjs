// Evaluates AWS calls against IAM policies with @cloud-copilot/iam-simulate (the
// version package-lock.json pins), offline.
//
// stdin: a JSON list of calls, each
//   { "id": "...", "principal": "arn:aws:iam::111122223333:role/x",
//     "action": "s3:PutObject", "resource": "arn:aws:s3:::b/k", "account": "111122223333",
//     "context": { "kms:ViaService": "s3.eu-west-1.amazonaws.com", ... },
//     "identityPolicies": [{ "name": "role/x", "policy": {...} }],
//     "resourcePolicy": { "name": "bucket/b", "policy": {...} } | null,
//     "permissionBoundary": {...} | null }
// stdout: a JSON list in the same order, each
//   { "id", "result": "Allowed" | "ExplicitlyDenied" | "ImplicitlyDenied" | "Error",
//     "reason": one line, "used": ["<policy name>#<statement index>", ...] }
// "used" names the Allow statements that matched (identity and resource) and any Deny
// statements that decided the call: what the least-privilege check counts as used.
import { runSimulation } from '@cloud-copilot/iam-simulate'
import { readFileSync } from 'node:fs'

const calls = JSON.parse(readFileSync(0, 'utf8'))

// iam-simulate names statements by their Sid or, without one, their 1-based index;
// the policies are tagged with a private Sid per statement so "used" is unambiguous.
function tag(name, policy) {
  const statements = Array.isArray(policy.Statement) ? policy.Statement : [policy.Statement]
  return {
    ...policy,
    Statement: statements.map((s, i) => ({ ...s, Sid: `${name}#${i}` }))
  }
}

function names(analysis) {
  if (!analysis) return []
  return [...(analysis.allowStatements || []), ...(analysis.denyStatements || [])].map(
    (s) => s.statement.sid()
  )
}

const out = []
for (const call of calls) {
  const simulation = {
    request: {
      principal: call.principal,
      action: call.action,
      resource: { resource: call.resource, accountId: call.account },
      contextVariables: call.context || {}
    },
    identityPolicies: (call.identityPolicies || []).map((p) => ({
      name: p.name,
      policy: tag(p.name, p.policy)
    })),
    serviceControlPolicies: [],
    resourceControlPolicies: [],
    resourcePolicy: call.resourcePolicy
      ? tag(call.resourcePolicy.name, call.resourcePolicy.policy)
      : undefined,
    permissionBoundaryPolicies: call.permissionBoundary
      ? [{ name: 'boundary', policy: call.permissionBoundary }]
      : undefined
  }
  let response
  try {
    response = await runSimulation(simulation, {})
  } catch (error) {
    out.push({ id: call.id, result: 'Error', reason: String(error), used: [] })
    continue
  }
  if (response.resultType === 'error') {
    out.push({ id: call.id, result: 'Error', reason: response.errors.message, used: [] })
    continue
  }
  const results = response.resultType === 'single' ? [response.result] : response.results
  const used = new Set()
  const reasons = []
  for (const r of results) {
    const a = r.analysis
    for (const n of names(a.identityAnalysis)) used.add(n)
    for (const n of names(a.resourceAnalysis)) used.add(n)
    for (const n of names(a.permissionBoundaryAnalysis)) used.add(n)
    reasons.push(
      `identity ${a.identityAnalysis?.result ?? 'none'}, resource ${
        a.resourceAnalysis?.result ?? 'none'
      }` + (a.blockedBy?.length ? `, blocked by ${a.blockedBy.join('+')}` : '')
    )
  }
  out.push({
    id: call.id,
    result: response.overallResult,
    reason: reasons.join('; '),
    ignoredContextKeys: results.flatMap((r) => r.ignoredContextKeys || []),
    used: [...used]
  })
}
process.stdout.write(JSON.stringify(out))
