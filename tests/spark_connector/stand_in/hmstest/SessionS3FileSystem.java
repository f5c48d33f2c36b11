package hmstest;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FSInputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.util.Progressable;

/**
 * A stand-in for hadoop-aws's S3AFileSystem, which this test machine's Spark lacks (and no registry here serves):
 * an S3 client for path-style endpoints that signs every request with AWS Signature V4, with the key S3A reads
 * ({@code fs.s3a.access.key}, {@code fs.s3a.secret.key}, {@code fs.s3a.session.token}, {@code fs.s3a.endpoint},
 * {@code fs.s3a.endpoint.region}). It reads what Spark's readers and writers need: whole objects, puts, heads,
 * listings and deletes. Each instance appends the access key it was made with (and whether a session token came
 * with it) to {@code fs.hmstest.record}, so a test sees which credential reached each scan and write.
 */
public class SessionS3FileSystem extends FileSystem {
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private static final DateTimeFormatter AMZ_DATE = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'");

    private URI uri;
    private Path workingDirectory;
    private String endpoint;
    private String region;
    private String accessKey;
    private String secretKey;
    private String sessionToken;

    @Override
    public void initialize(URI name, Configuration conf) throws IOException {
        super.initialize(name, conf);
        this.uri = URI.create(name.getScheme() + "://" + name.getAuthority());
        this.workingDirectory = new Path(uri.toString() + "/");
        this.endpoint = conf.get("fs.s3a.endpoint", "").replaceAll("/+$", "");
        this.region = conf.get("fs.s3a.endpoint.region", "us-east-1");
        this.accessKey = conf.get("fs.s3a.access.key");
        this.secretKey = conf.get("fs.s3a.secret.key");
        this.sessionToken = conf.get("fs.s3a.session.token");
        String record = conf.get("fs.hmstest.record");
        if (record != null) {
            String line = accessKey + "\t" + (sessionToken != null && !sessionToken.isEmpty()) + "\n";
            Files.write(Paths.get(record), line.getBytes(StandardCharsets.UTF_8), StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND);
        }
        if (endpoint.isEmpty() || accessKey == null || secretKey == null) {
            throw new IOException("no S3 endpoint or key in this Configuration for " + name);
        }
    }

    @Override
    public String getScheme() {
        return uri == null ? "s3a" : uri.getScheme();
    }

    @Override
    public URI getUri() {
        return uri;
    }

    private String bucket(Path path) {
        return path.toUri().getAuthority();
    }

    private static String key(Path path) {
        String key = path.toUri().getPath();
        return key.startsWith("/") ? key.substring(1) : key;
    }

    @Override
    public FSDataInputStream open(Path path, int bufferSize) throws IOException {
        HttpResponse<byte[]> answer = send("GET", bucket(path), key(path), Map.of(), new byte[0]);
        if (answer.statusCode() == 404) {
            throw new FileNotFoundException(path.toString());
        }
        checked(answer, "GET", path);
        return new FSDataInputStream(new BytesInput(answer.body()));
    }

    @Override
    public FSDataOutputStream create(Path path, FsPermission permission, boolean overwrite, int bufferSize, short replication,
                                     long blockSize, Progressable progress) throws IOException {
        ByteArrayOutputStream buffer = new ByteArrayOutputStream() {
            private boolean closed;

            @Override
            public void close() throws IOException {
                if (!closed) {
                    closed = true;
                    checked(send("PUT", bucket(path), key(path), Map.of(), toByteArray()), "PUT", path);
                }
            }
        };
        return new FSDataOutputStream(buffer, statistics);
    }

    @Override
    public FSDataOutputStream append(Path path, int bufferSize, Progressable progress) throws IOException {
        throw new IOException("S3 has no append");
    }

    @Override
    public boolean rename(Path source, Path destination) throws IOException {
        throw new IOException("this stand-in does not rename (" + source + " -> " + destination + ")");
    }

    @Override
    public boolean delete(Path path, boolean recursive) throws IOException {
        List<String> keys = new ArrayList<>();
        keys.add(key(path));
        if (recursive) {
            for (FileStatus status : list(path, false)) {
                keys.add(key(status.getPath()));
            }
        }
        for (String key : keys) {
            checked(send("DELETE", bucket(path), key, Map.of(), new byte[0]), "DELETE", path);
        }
        return true;
    }

    @Override
    public FileStatus[] listStatus(Path path) throws IOException {
        List<FileStatus> found = list(path, true);
        if (found.isEmpty()) {
            return new FileStatus[] {getFileStatus(path)};
        }
        return found.toArray(new FileStatus[0]);
    }

    private static final Pattern CONTENTS = Pattern.compile("<Contents>.*?<Key>(.*?)</Key>.*?<Size>(\\d+)</Size>.*?</Contents>",
            Pattern.DOTALL);
    private static final Pattern PREFIXES = Pattern.compile("<CommonPrefixes>\\s*<Prefix>(.*?)</Prefix>", Pattern.DOTALL);

    /** The objects (and with {@code folders}, the folders) under {@code path}: one page is enough for a test. */
    private List<FileStatus> list(Path path, boolean folders) throws IOException {
        String prefix = key(path).isEmpty() ? "" : key(path).replaceAll("/+$", "") + "/";
        Map<String, String> query = new TreeMap<>(Map.of("list-type", "2", "prefix", prefix));
        if (folders) {
            query.put("delimiter", "/");
        }
        HttpResponse<byte[]> answer = checked(send("GET", bucket(path), "", query, new byte[0]), "LIST", path);
        String xml = new String(answer.body(), StandardCharsets.UTF_8);
        List<FileStatus> found = new ArrayList<>();
        Matcher objects = CONTENTS.matcher(xml);
        while (objects.find()) {
            Path child = new Path(uri.toString() + "/" + unescaped(objects.group(1)));
            found.add(new FileStatus(Long.parseLong(objects.group(2)), false, 1, 1, 0, makeQualified(child)));
        }
        Matcher subfolders = PREFIXES.matcher(xml);
        while (subfolders.find()) {
            String folder = subfolders.group(1).replaceAll("/+$", "");
            found.add(new FileStatus(0, true, 1, 1, 0, makeQualified(new Path(uri.toString() + "/" + unescaped(folder)))));
        }
        return found;
    }

    private static String unescaped(String key) {
        return key.replace("&amp;", "&");
    }

    @Override
    public void setWorkingDirectory(Path directory) {
        this.workingDirectory = directory;
    }

    @Override
    public Path getWorkingDirectory() {
        return workingDirectory;
    }

    @Override
    public boolean mkdirs(Path path, FsPermission permission) {
        return true;  // S3 has no folders
    }

    @Override
    public FileStatus getFileStatus(Path path) throws IOException {
        Path qualified = makeQualified(path);
        if (!key(path).isEmpty()) {
            HttpResponse<byte[]> head = send("HEAD", bucket(path), key(path), Map.of(), new byte[0]);
            if (head.statusCode() == 200) {
                long length = head.headers().firstValueAsLong("content-length").orElse(0L);
                return new FileStatus(length, false, 1, 1, 0, qualified);
            }
            if (head.statusCode() != 404) {
                checked(head, "HEAD", path);
            }
            if (list(path, true).isEmpty()) {
                throw new FileNotFoundException(path.toString());
            }
        }
        return new FileStatus(0, true, 1, 1, 0, qualified);
    }

    private HttpResponse<byte[]> checked(HttpResponse<byte[]> answer, String what, Path path) throws IOException {
        if (answer.statusCode() / 100 != 2) {
            throw new IOException(what + " " + path + ": " + answer.statusCode() + " "
                    + new String(answer.body(), StandardCharsets.UTF_8));
        }
        return answer;
    }

    /** One request, path style, signed with AWS Signature V4 (the session token in {@code x-amz-security-token}). */
    private HttpResponse<byte[]> send(String method, String bucket, String key, Map<String, String> query, byte[] body)
            throws IOException {
        URI base = URI.create(endpoint);
        String host = base.getHost() + (base.getPort() > 0 ? ":" + base.getPort() : "");
        StringBuilder path = new StringBuilder("/").append(encode(bucket));
        if (!key.isEmpty()) {
            for (String segment : key.split("/", -1)) {
                path.append('/').append(encode(segment));
            }
        }
        StringBuilder canonicalQuery = new StringBuilder();
        for (Map.Entry<String, String> entry : new TreeMap<>(query).entrySet()) {
            canonicalQuery.append(canonicalQuery.length() == 0 ? "" : "&").append(encode(entry.getKey())).append('=')
                    .append(encode(entry.getValue()));
        }
        String amzDate = AMZ_DATE.format(ZonedDateTime.now(ZoneOffset.UTC));
        String date = amzDate.substring(0, 8);
        String payload = hex(sha256(body));
        TreeMap<String, String> headers = new TreeMap<>();
        headers.put("host", host);
        headers.put("x-amz-content-sha256", payload);
        headers.put("x-amz-date", amzDate);
        if (sessionToken != null && !sessionToken.isEmpty()) {
            headers.put("x-amz-security-token", sessionToken);
        }
        StringBuilder canonicalHeaders = new StringBuilder();
        headers.forEach((name, value) -> canonicalHeaders.append(name).append(':').append(value.strip()).append('\n'));
        String signedHeaders = String.join(";", headers.keySet());
        String canonical = method + "\n" + path + "\n" + canonicalQuery + "\n" + canonicalHeaders + "\n" + signedHeaders + "\n" + payload;
        String scope = date + "/" + region + "/s3/aws4_request";
        String toSign = "AWS4-HMAC-SHA256\n" + amzDate + "\n" + scope + "\n" + hex(sha256(canonical.getBytes(StandardCharsets.UTF_8)));
        byte[] signingKey = hmac(hmac(hmac(hmac(("AWS4" + secretKey).getBytes(StandardCharsets.UTF_8), date), region), "s3"),
                "aws4_request");
        String signature = hex(hmac(signingKey, toSign));
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(endpoint + path + (canonicalQuery.length() == 0 ? "" : "?" + canonicalQuery)))
                .method(method, body.length == 0 ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(body))
                .header("Authorization", "AWS4-HMAC-SHA256 Credential=" + accessKey + "/" + scope + ", SignedHeaders=" + signedHeaders
                        + ", Signature=" + signature);
        headers.forEach((name, value) -> {
            if (!name.equals("host")) {
                request.header(name, value);
            }
        });
        try {
            return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted: " + method + " " + path, e);
        }
    }

    private static String encode(String text) {
        return URLEncoder.encode(text, StandardCharsets.UTF_8).replace("+", "%20").replace("*", "%2A").replace("%7E", "~");
    }

    private static byte[] sha256(byte[] data) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(data);
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static byte[] hmac(byte[] key, String data) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            return mac.doFinal(data.getBytes(StandardCharsets.UTF_8));
        } catch (java.security.GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String hex(byte[] bytes) {
        StringBuilder text = new StringBuilder();
        for (byte b : bytes) {
            text.append(String.format("%02x", b));
        }
        return text.toString();
    }

    /** An object's bytes as a seekable stream (Parquet reads the footer first). */
    private static final class BytesInput extends FSInputStream {
        private final byte[] bytes;
        private int position;

        BytesInput(byte[] bytes) {
            this.bytes = bytes;
        }

        @Override
        public void seek(long target) throws IOException {
            if (target < 0 || target > bytes.length) {
                throw new EOFException("seek to " + target + " of " + bytes.length + " bytes");
            }
            position = (int) target;
        }

        @Override
        public long getPos() {
            return position;
        }

        @Override
        public boolean seekToNewSource(long target) {
            return false;
        }

        @Override
        public int read() {
            return position < bytes.length ? bytes[position++] & 0xff : -1;
        }

        @Override
        public int read(byte[] buffer, int offset, int length) {
            if (position >= bytes.length) {
                return -1;
            }
            int count = Math.min(length, bytes.length - position);
            System.arraycopy(bytes, position, buffer, offset, count);
            position += count;
            return count;
        }

        @Override
        public int available() {
            return bytes.length - position;
        }
    }
}
