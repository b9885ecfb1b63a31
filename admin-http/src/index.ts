export {
  type AdminAnswer,
  type AdminOperation,
  type AdminOperations,
  type AdminServer,
  type AdminServerOptions,
  type BearerToken,
  hasBody,
  type MetricsRegistry,
  type Readiness,
  startAdminServer,
} from './admin-server.ts';
