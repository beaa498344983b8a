//! A store that counts the requests made through it: how the tests and the benchmark check
//! what a poll costs (docs/contract/object-storage.md "What a poll costs"). It wraps a real
//! store (S3 against moto's server, or object_store's in-memory store) and counts each call
//! before handing it on; one `list` call is one LIST request per 1 000 objects it returns.

use async_trait::async_trait;
use futures::stream::BoxStream;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    PutMultipartOptions, PutOptions, PutPayload, PutResult, RenameOptions, Result,
};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Requests counted so far.
#[derive(Debug, Default)]
pub struct Counts {
    /// `list` calls (each one LIST request per 1 000 objects).
    pub lists: AtomicUsize,
    /// Objects the `list` calls returned.
    pub listed: AtomicUsize,
    /// GETs (ranged or whole).
    pub gets: AtomicUsize,
    /// Ranged GETs among them.
    pub ranged_gets: AtomicUsize,
    /// HEADs.
    pub heads: AtomicUsize,
    /// Writes (PUT, multipart, copy, rename, delete).
    pub writes: AtomicUsize,
}

impl Counts {
    /// (LIST requests, GETs, ranged GETs, HEADs) so far, and zero them.
    pub fn take(&self) -> (usize, usize, usize, usize) {
        let lists = self.lists.swap(0, Ordering::SeqCst);
        let listed = self.listed.swap(0, Ordering::SeqCst);
        let pages = if lists == 0 {
            0
        } else {
            listed.div_ceil(1000).max(lists)
        };
        (
            pages,
            self.gets.swap(0, Ordering::SeqCst),
            self.ranged_gets.swap(0, Ordering::SeqCst),
            self.heads.swap(0, Ordering::SeqCst),
        )
    }
}

/// `inner` with every request counted in `counts`.
#[derive(Debug)]
pub struct Counting {
    /// The real store.
    pub inner: Arc<dyn ObjectStore>,
    /// What was asked of it.
    pub counts: Arc<Counts>,
}

impl std::fmt::Display for Counting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Counting({})", self.inner)
    }
}

#[async_trait]
impl ObjectStore for Counting {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> Result<PutResult> {
        self.counts.writes.fetch_add(1, Ordering::SeqCst);
        self.inner.put_opts(location, payload, opts).await
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> Result<Box<dyn MultipartUpload>> {
        self.counts.writes.fetch_add(1, Ordering::SeqCst);
        self.inner.put_multipart_opts(location, opts).await
    }

    async fn get_opts(&self, location: &Path, options: GetOptions) -> Result<GetResult> {
        if options.head {
            self.counts.heads.fetch_add(1, Ordering::SeqCst);
        } else {
            self.counts.gets.fetch_add(1, Ordering::SeqCst);
            if options.range.is_some() {
                self.counts.ranged_gets.fetch_add(1, Ordering::SeqCst);
            }
        }
        self.inner.get_opts(location, options).await
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, Result<Path>>,
    ) -> BoxStream<'static, Result<Path>> {
        self.counts.writes.fetch_add(1, Ordering::SeqCst);
        self.inner.delete_stream(locations)
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, Result<ObjectMeta>> {
        use futures::StreamExt;
        self.counts.lists.fetch_add(1, Ordering::SeqCst);
        let counts = Arc::clone(&self.counts);
        self.inner
            .list(prefix)
            .inspect(move |item| {
                if item.is_ok() {
                    counts.listed.fetch_add(1, Ordering::SeqCst);
                }
            })
            .boxed()
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> Result<ListResult> {
        self.counts.lists.fetch_add(1, Ordering::SeqCst);
        self.inner.list_with_delimiter(prefix).await
    }

    async fn copy_opts(&self, from: &Path, to: &Path, options: CopyOptions) -> Result<()> {
        self.counts.writes.fetch_add(1, Ordering::SeqCst);
        self.inner.copy_opts(from, to, options).await
    }

    async fn rename_opts(&self, from: &Path, to: &Path, options: RenameOptions) -> Result<()> {
        self.counts.writes.fetch_add(1, Ordering::SeqCst);
        self.inner.rename_opts(from, to, options).await
    }
}
