import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { ADMIN_ACTIONS } from '@payments/contracts';
import { buildAdminOpenApiDocument } from './admin-openapi';

const FILE = resolve(__dirname, '../../../../../docs/openapi/admin.json');

describe('admin API OpenAPI document', () => {
  it('the published docs/openapi/admin.json equals a fresh generation (run npm run openapi:generate)', async () => {
    const published: unknown = JSON.parse(readFileSync(FILE, 'utf8'));
    expect(published).toEqual(JSON.parse(JSON.stringify(await buildAdminOpenApiDocument())));
  });

  it('documents the routes, bearer auth and every action', async () => {
    const document = await buildAdminOpenApiDocument();
    expect(Object.keys(document.paths).sort()).toEqual([
      '/admin/cases',
      '/admin/cases/{id}',
      '/admin/cases/{id}/approve',
      '/admin/cases/{id}/propose',
      '/admin/cases/{id}/reject-proposal',
      '/admin/days/{day}',
      '/admin/days/{day}/close',
      '/admin/days/{day}/reports',
      '/admin/dead-letters',
      '/admin/dead-letters/replay',
      '/admin/live/events',
      '/admin/live/minutes',
      '/admin/reconciliation/runs',
      '/admin/reconciliation/runs/{id}',
      '/admin/sagas',
      '/admin/sagas/{id}',
      '/admin/sagas/{id}/actions/{action}',
      '/admin/tokens',
      '/admin/tokens/{id}/revoke',
      '/admin/whoami',
    ]);
    expect(document.components?.securitySchemes).toHaveProperty('bearer');
    const act = document.paths['/admin/sagas/{id}/actions/{action}']?.post;
    const actionParameter = act?.parameters?.find((p) => 'name' in p && p.name === 'action');
    expect(actionParameter).toMatchObject({ schema: { enum: [...ADMIN_ACTIONS] } });
    expect(Object.keys(act?.responses ?? {}).sort()).toEqual([
      '202',
      '400',
      '401',
      '403',
      '404',
      '409',
    ]);
  });
});
