/**
 * The pictures of the console's query, attachment, replication and metrics pages in
 * docs/console.md: a server with a little data, each page driven as a person would, a PNG of each
 * under docs/images/console-<page>.png (1000 px wide). Not part of the test run.
 *
 * npm run build && node dist/bench/console-screenshots.js
 */
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { ADMIN, startServer } from '../test/support/server.js';
import { DESKTOP, PHONE, REPO_ROOT, launchChromium } from '../test/support/browser.js';
import { settled, signIn, statusAfter, visit } from '../test/support/console.js';

const OUT = join(REPO_ROOT, 'docs', 'images');
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAADAAAAAgCAIAAADbtmxLAAAPK0lEQVR42gXBT8vBcAAA4Pfj7ODg4OCwIk2tSFMrErWyRNaYfrIYTRabJsu/JmtMExER0UQTEd/qfZ6/Lwx9PdDXB3390BeFvgHoG4K+YeiLQ98I9I1B3wT0JaBvEvqmoG8G+lLQNwd9C9C3CH1Z6FuBvjXoW4e+AvRtQd829O1AXwX69qHvCPqOoa8GfafQdw59F9B3BX030HcHfQ/Q9wR9L9D3Cn3v0PcBfV/Q9wN9f9DfG3a8PY63z/H2O96o4x1wvEOOd9jxxh3viOMdc7wTjjfheCcd75TjnXG8Kcc753gXHO+i48063hXHu+Z41x1vwfFuOd5tx7vjeCuOd9/xHjneY8dbc7ynjvfc8V443ivHe+N47xzvg+N9crwvjvfV8b473g/H++V4fxzvn+PvCTufHufT53z6nU/U+Qw4nyHnM+x84s5nxPmMOZ8J55NwPpPOZ8r5zDiflPOZcz4LzmfR+WSdz4rzWXM+686n4Hy2nM+289lxPhXns+98jpzPsfOpOZ9T53PufC6cz5XzuXE+d87nwfk8OZ8X5/PqfN6dz4fz+XI+P87nz/lnwy7b47J9LtvvslGXHXDZIZcddtm4y4647JjLTrhswmUnXXbKZWdcNuWycy674LKLLpt12RWXXXPZdZctuOyWy2677I7LVlx232WPXPbYZWsue+qy5y574bJXLnvjsncu++CyTy774rKvLvvush8u++WyPy775/q7we6bx33zuW9+9w113wLuW8h9C7tvuPsWcd9i7lvCfSPct6T7lnLfMu4b5b7l3LeC+1Z031j3reK+1dy3uvsmuG8t963tvnXcN8V967tvI/dt7L5p7tvUfZu7bwv3beW+bdy3nft2cN9O7tvFfbu6b3f37eG+vdy3j/v2c/9ZMGx5YMsHW37YQmErAFsh2ArDFg5bEdiKwVYCtgjYSsJWCrYysEXBVg62CrBVhC0WtiqwVYOtOmwJsNWCrTZsdWBLga0+bI1gawxbGmxNYWsOWwvYWsHWBrZ2sHWArRNsXWDrClt32HrA1gu2PrD1g//OsPfs8Z593rPfe0a954D3HPKew94z7j1HvOeY95zwngnvOek9p7znjPdMec8577ngPRe9Z9Z7rnjPNe+57j0L3nPLe257zx3vWfGe+97zyHsee8+a9zz1nufe88J7XnnPG+955z0fvOeT93zxnq/e8917fnjPL+/54z3/vH9HGDl6kKMPOfqRI4ocA8gxhBzDyBFHjhHkGEOOCeRIIMckckwhxwxypJBjDjkWkGMRObLIsYIca8ixjhwF5NhCjm3k2EGOCnLsI8cRchwjRw05TpHjHDkukOMKOW6Q4w45HpDjCTlekOMVOd6R4wM5vpDjBzn+kL89jO496N6H7v3oHkX3AXQfQvdhdI+j+wi6j6H7BLon0H0S3afQfQbdU+g+h+4L6L6I7ll0X0H3NXRfR/cCum+h+za676B7Bd330f0I3Y/RvYbup+h+ju4X6H6F7jfofofuD+j+hO4v6P6K7u/o/oHuX+j+g+5/6N8WDm49wa0vuPUHt2hwGwhuQ8FtOLjFg9tIcBsLbhPBLRHcJoPbVHCbCW6p4DYX3BaC22Jwywa3leC2FtzWg1shuG0Ft+3gthPcKsFtP7gdBbfj4FYLbqfB7Ty4XQS3q+B2E9zugttDcHsKbi/B7TW4vQe3j+D2Fdx+gttf8G8NY2sPtvZhaz+2RrF1AFuHsHUYW+PYOoKtY9g6ga0JbJ3E1ilsncHWFLbOYesCti5iaxZbV7B1DVvXsbWArVvYuo2tO9hawdZ9bD3C1mNsrWHrKbaeY+sFtl5h6w223mHrA7Y+YesLtr5i6zu2fmDrF7b+YOsf9reE8aUHX/rwpR9fovgygC9D+DKML3F8GcGXMXyZwJcEvkziyxS+zOBLCl/m8GUBXxbxJYsvK/iyhi/r+FLAly182caXHXyp4Ms+vhzhyzG+1PDlFF/O8eUCX67w5QZf7vDlAV+e8OUFX17x5R1fPvDlC19+8OUP/zPhqOmJmr6o6Y+aaNQMRM1Q1AxHTTxqRqJmLGomoiYRNZNRMxU1M1GTipq5qFmImsWoyUbNStSsRc161BSiZitqtqNmJ2oqUbMfNUdRcxw1tag5jZrzqLmImquouYmau6h5iJqnqHmJmteoeY+aj6j5ipqfqPmL/hlw3PDEDV/c8McNNG4E4kYoboTjBh43InEjFjcScYOIG8m4kYobmbhBxY1c3CjEjWLcYONGJW7U4kY9bghxoxU32nGjEzeUuNGPG6O4MY4bWtyYxo153FjEjVXc2MSNXdw4xI1T3LjEjWvcuMeNR9x4xY1P3PjF/3SY0D2E7iN0P6GjhB4g9BChhwkdJ/QIoccIPUHoBKEnCT1F6BlCpwg9R+gFQi8SOkvoFUKvEXqd0AVCbxF6m9A7hK4Qep/QR4Q+JnSN0KeEPif0BaGvCH1D6DtCPxD6idAvhH4l9DuhPwj9RegfQv8RfxOYnHjIiY+c+MkJSk4C5CRETsLkBCcnEXISIycJckKQkyQ5SZGTDDmhyEmOnBTISZGcsOSkQk5q5KROTgRy0iInbXLSIScKOemTkxE5GZMTjZxMycmcnCzIyYqcbMjJjpwcyMmJnFzIyZWc3MnJg5y8yMmHnPzIPxVOq5606kur/rSKptVAWg2l1XBaxdNqJK3G0moirRJpNZlWU2k1k1aptJpLq4W0WkyrbFqtpNVaWq2nVSGtttJqO6120qqSVvtpdZRWx2lVS6vTtDpPq4u0ukqrm7S6S6uHtHpKq5e0ek2r97T6SKuvtPpJq7/03xCmhh5q6KOGfmqIUsMANQxRwzA1xKlhhBrGqGGCGhLUMEkNU9QwQw0papijhgVqWKSGLDWsUMMaNaxTQ4Eatqhhmxp2qKFCDfvUcEQNx9RQo4ZTajinhgtquKKGG2q4o4YHaniihhdqeKWGd2r4oIYvavihhj/qrwfne558z5fv+fM9NN8L5HuhfC+c7+H5XiTfi+V7iXyPyPeS+V4q38vke1S+l8v3CvleMd9j871KvlfL9+r5npDvtfK9dr7XyfeUfK+f743yvXG+p+V703xvnu8t8r1VvrfJ93b53iHfO+V7l3zvmu/d871HvvfK9z753i//14VB1wO6PtD1gy4KugHQDYFuGHRx0I2Abgx0E6BLgG4SdFOgmwFdCnRzoFsA3SLosqBbAd0a6NZBVwDdFui2QbcDugro9kF3BLpj0NVAdwq6c9BdgO4KdDeguwPdA+ieQPcCulfQvYPuA3RfoPsB3R/4k2FW9rCyj5X9rIyycoCVQ6wcZmWclSOsHGPlBCsTrJxk5RQrZ1iZYuUcKxdYucjKLCtXWLnGynVWFli5xcptVu6wssLKfVYesfKYlTVWnrLynJUXrLxi5Q0r71j5wMonVr6w8pWV76z8YOUXK39Y+cf+STAneTjJx0l+TkI5KcBJIU4KcxLOSRFOinFSgpMITkpyUoqTMpxEcVKOkwqcVOQklpMqnFTjpDonCZzU4qQ2J3U4SeGkPieNOGnMSRonTTlpzkkLTlpx0oaTdpx04KQTJ1046cpJd056cNKLkz6c9OP+mjDf9PBNH9/0802Ubwb4ZohvhvkmzjcjfDPGNxN8k+CbSb6Z4psZvknxzRzfLPDNIt9k+WaFb9b4Zp1vCnyzxTfbfLPDNxW+2eebI7455psa35zyzTnfXPDNFd/c8M0d3zzwzRPfvPDNK9+8880H33zxzQ/f/PF/DVhoeISGT2j4hQYqNAJCIyQ0wkIDFxoRoRETGgmhQQiNpNBICY2M0KCERk5oFIRGUWiwQqMiNGpCoy40BKHREhptodERGorQ6AuNkdAYCw1NaEyFxlxoLITGSmhshMZOaByExkloXITGVWjchcZDaLyExkdo/IQ/HhZ5j8j7RN4v8qjIB0Q+JPJhkcdFPiLyMZFPiDwh8kmRT4l8RuQpkc+JfEHkiyLPinxF5GsiXxd5QeRbIt8W+Y7IKyLfF/mRyI9FXhP5qcjPRX4h8iuR34j8TuQPIn8S+YvIX0X+LvIPkX+J/Efkf+JfFZarHrnqk6t+uYrK1YBcDcnVsFzF5WpErsbkakKuEnI1KVdTcjUjVym5mpOrBblalKusXK3I1ZpcrctVQa625GpbrnbkqiJX+3J1JFfHclWTq1O5OperC7m6kqsbubqTqwe5epKrF7l6lat3ufqQqy+5+pGrP/mvDCtlj1L2KWW/UkaVckAph5RyWCnjSjmilGNKOaGUCaWcVMoppZxRypRSzinlglIuKmVWKVeUck0p15WyoJRbSrmtlDtKWVHKfaU8Uspjpawp5alSnivlhVJeKeWNUt4p5YNSPinli1K+KuW7Un4o5ZdS/ijln/JXggclz6DkG5T8gxI6KAUGpdCgFB6U8EEpMijFBqXEoEQMSslBKTUoZQYlalDKDUqFQak4KLGDUmVQqg1K9UFJGJRag1J7UOoMSsqg1B+URoPSeFDSBqXpoDQflBaD0mpQ2gxKu0HpMCidBqXLoHQdlO6D0mNQeg1Kn0HpN/gDsAo8KvCpwK8CVAUBFYRUEFYBroKICmIqSKiAUEFSBSkVZFRAqSCngoIKiipgVVBRQU0FdRUIKmipoK2CjgoUFfRVMFLBWAWaCqYqmKtgoYKVCjYq2KngoIKTCi4quKrgroKHCl4q+Kjgp/4xsMZ4NManMX6NQTUmoDEhjQlrDK4xEY2JaUxCYwiNSWpMSmMyGkNpTE5jChpT1BhWYyoaU9OYusYIGtPSmLbGdDRG0Zi+xow0ZqwxmsZMNWauMQuNWWnMRmN2GnPQmJPGXDTmqjF3jXlozEtjPhrz0/5oeEZ7ZrRvRvtnNDqjAzM6NKPDMxqf0ZEZHZvRiRlNzOjkjE7N6MyMpmZ0bkYXZnRxRrMzujKjazO6PqOFGd2a0e0Z3ZnRyozuz+jRjB7PaG1GT2f0fEYvZvRqRm9m9G5GH2b0aUZfZvR1Rt9n9GNGv2b0Z0b/Zn9Z2Mx6zKzPzPrNLGpmA2Y2ZGbDZhY3sxEzGzOzCTNLmNmkmU2Z2YyZpcxszswWzGzRzLJmtmJma2a2bmYFM9sys20z2zGzipntm9mRmR2bWc3MTs3s3MwuzOzKzG7M7M7MHszsycxezOzVzN7N7MPMvszsx8z+zH+O6AyIes34tgAAAABJRU5ErkJggg==';

const server = await startServer({ ini: '[chttpd_auth]\niterations = 1000\n' });
const browser = await launchChromium();
try {
  const fruit = ['apple', 'banana', 'cherry', 'damson', 'elderberry', 'fig', 'grape', 'kiwi'].map((name, index) => ({ _id: name, type: 'fruit', colour: ['red', 'yellow', 'red', 'purple', 'black', 'green', 'green', 'brown'][index], price: index + 1 }));
  await server.admin('/fruit', { method: 'PUT' });
  await server.admin('/fruit/_bulk_docs', { method: 'POST', body: { docs: fruit } });
  await server.admin('/fruit/_design/shop', { method: 'PUT', body: { views: { by_colour: { map: 'function (doc) {\n  if (doc.type === "fruit") emit(doc.colour, doc.price);\n}', reduce: '_sum' } } } });
  await server.admin('/fruit/_index', { method: 'POST', body: { index: { fields: ['price'] }, name: 'by-price', ddoc: 'prices' } });
  const apple = (await server.admin('/fruit/apple')).body as Record<string, unknown>;
  const attachments = { 'photo.png': { content_type: 'image/png', data: PNG }, 'notes.txt': { content_type: 'text/plain', data: Buffer.from('picked in May').toString('base64') } };
  await server.admin('/fruit/apple', { method: 'PUT', body: { ...apple, _attachments: attachments } });
  const context = await browser.newContext({ ...DESKTOP, viewport: { width: 1000, height: 760 } });
  const page = await context.newPage();
  await signIn(page, server, ADMIN[0], ADMIN[1], '#/db/fruit');
  const shot = (name: string, fullPage = false) => page.screenshot({ path: join(OUT, `console-${name}.png`), fullPage, animations: 'disabled', caret: 'hide' });
  await shot('documents');
  await viewPages(page, shot);
  await mangoPage(page, shot);
  await visit(page, '#/db/fruit/doc/apple', 'Document apple');
  await page.evaluate("document.getElementById('attachments').scrollIntoView()");
  await shot('attachments');
  await replicationPage(page, shot);
  await visit(page, '#/metrics', 'Metrics');
  await page.selectOption('#metrics-interval', '1');
  for (let round = 0; round < 12; round++) {
    await Promise.all(Array.from({ length: 10 + round * 3 }, (_, index) => server.admin(`/fruit/${['apple', 'nope'][index % 2]}`)));
    await server.request('/fruit', { auth: ['mallory', 'wrong'] });
    await page.waitForTimeout(1000);
  }
  await shot('metrics-live');
  const phone = await browser.newContext(PHONE);
  const small = await phone.newPage();
  await signIn(small, server);
  await visit(small, '#/db/fruit/mango', 'Mango query on fruit');
  await small.screenshot({ path: join(OUT, 'console-phone-mango.png'), animations: 'disabled', caret: 'hide' });
  await phone.close();
  await context.close();
} finally {
  await browser.close();
  await server.close();
}

async function viewPages(page: Page, shot: (name: string) => Promise<unknown>): Promise<void> {
  await visit(page, '#/db/fruit/views', 'Views of fruit');
  await shot('views');
  await visit(page, '#/db/fruit/views/shop/by_colour', 'View shop/by_colour');
  await page.fill('#view-group-level', '1');
  await statusAfter(page, () => page.click('#run-view'), /The view answered/);
  await page.locator('#run-view-section').scrollIntoViewIfNeeded();
  await shot('view');
}

async function mangoPage(page: Page, shot: (name: string) => Promise<unknown>): Promise<void> {
  await visit(page, '#/db/fruit/mango', 'Mango query on fruit');
  await page.fill('#mango-selector', '{\n  "price": { "$gt": 2 },\n  "colour": { "$in": ["red", "green"] }\n}');
  await page.fill('#mango-fields', '_id, colour, price');
  await page.fill('#mango-sort', 'price desc');
  await statusAfter(page, () => page.click('#mango-run'), /The query found/);
  await shot('mango');
  await statusAfter(page, () => page.click('#mango-explain-button'), /would use the index/);
  await shot('mango-explain');
}

async function replicationPage(page: Page, shot: (name: string) => Promise<unknown>): Promise<void> {
  await visit(page, '#/replication', 'Replication');
  await page.fill('#source-location', 'fruit');
  await page.fill('#source-password', ADMIN[1]);
  await page.fill('#target-location', 'fruit-copy');
  await page.fill('#target-password', ADMIN[1]);
  await page.check('#replication-create-target');
  await page.check('#replication-continuous');
  await statusAfter(page, () => page.click('#start-replication'), /started/);
  await page.locator('#replication-jobs td[data-label="Documents written"]').filter({ hasText: /^[1-9]/ }).waitFor({ timeout: 60_000 });
  await settled(page);
  await page.evaluate("document.getElementById('jobs-heading').scrollIntoView()");
  await shot('replication');
}
