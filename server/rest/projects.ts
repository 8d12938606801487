// /v1/projects routes: list, retrieve and usage of the projects an API key reaches.
import { resolveProject } from '../auth/apiKeys.ts';
import { getProject, listProjects, projectUsage } from '../projects/projects.ts';
import { wrapped, type RestRoute } from './route.ts';

const pick = ({ id, name, defaultTimeout, concurrency }: { id: string; name: string; defaultTimeout: number; concurrency: number }) =>
  ({ id, name, defaultTimeout, concurrency });

export const projectRoutes: RestRoute[] = [
  {
    method: 'GET', url: '/v1/projects', auth: 'apiKey',
    handler: async ({ deps, auth }) => ({ success: true, data: (await listProjects(deps.db, auth.projectIds)).map(pick) }),
  },
  {
    method: 'GET', url: '/v1/projects/:id', auth: 'apiKey',
    handler: async ({ deps, auth, params }) => wrapped(pick(await getProject(deps.db, resolveProject(auth, params.id)))),
  },
  {
    method: 'GET', url: '/v1/projects/:id/usage', auth: 'apiKey',
    handler: async ({ deps, auth, params }) => wrapped(await projectUsage(deps.db, resolveProject(auth, params.id), deps.clock.now())),
  },
];
