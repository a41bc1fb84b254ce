import { pageAgain, refusalPage } from './refusals';

describe('refusal pages', () => {
  it('says a stale form expired and links the page it came from again', () => {
    const page = refusalPage(403, 'CSRF_TOKEN_INVALID', '/sagas/a/actions/approve', 'e1');
    expect(page.title).toBe('This form expired');
    expect(page.body.text).toContain('nothing was done. Here is the page again');
    expect(page.body.text).toContain('href="/sagas/a/actions/approve"');
    expect(page.body.text).toContain('CSRF_TOKEN_INVALID');
    expect(page.body.text).not.toContain('{');
  });

  it('links a form with no page of its own to where it was sent from', () => {
    expect(pageAgain('/sign-in')).toBe('/sign-in');
    expect(pageAgain('/sign-out')).toBe('/sagas');
    expect(pageAgain('/dead-letters/replay')).toBe('/dead-letters');
    expect(pageAgain('/somewhere/else')).toBe('/sagas');
  });

  it('says an unknown address and a failure in plain words, with the error id', () => {
    expect(refusalPage(404, undefined, '/x', 'e2').body.text).toContain(
      'There is no page at this address',
    );
    const failed = refusalPage(500, undefined, '/x', 'e3').body.text;
    expect(failed).toContain('Something went wrong');
    expect(failed).toContain('error id e3');
  });
});
